import FerryContract
import FerryCore
import GLibAdapter
import GtkAdapter

/// People's and rooms' pictures on the rows of the share dialog and the main window: asked of the
/// service once each (it keeps them as files, GetAvatar), shown when they arrive. Rows are made
/// with their initials and never wait: the first frame is drawn before any picture is asked for,
/// and a row without a picture keeps its initials.
@GLibMain final class AvatarPictures {
    private let service: ServiceClient
    /// The files known, by picture ("" where there is none).
    private var files: [String: String] = [:]
    /// The avatars waiting for a picture being fetched.
    private var waiting: [String: [Weak]] = [:]
    /// The size asked for: twice a row's 32 pixels, for a display at double scale.
    static let size: UInt32 = 64

    private struct Weak { weak var avatar: Avatar? }

    init(service: ServiceClient) { self.service = service }

    /// Shows the picture `uri` names (nil: `account`'s own) on `avatar`, now when it is known,
    /// otherwise once it arrives.
    func show(_ uri: String?, as account: String?, on avatar: Avatar) {
        guard let account, uri != nil || !account.isEmpty else { return }
        let key = uri ?? "account " + account
        if let file = files[key] {
            avatar.showPicture(at: file)
            return
        }
        let first = waiting[key] == nil
        waiting[key, default: []].append(Weak(avatar: avatar))
        guard first else { return }
        service.avatar(account: account, uri: uri, size: Self.size) { [weak self] result in
            guard let self else { return }
            let file: String
            switch result {
            case .success(let path): file = path
            // Not kept: asked again the next time a row shows it (the network may be back).
            case .failure: file = ""
            }
            if case .success = result { self.files[key] = file }
            for entry in self.waiting.removeValue(forKey: key) ?? [] { entry.avatar?.showPicture(at: file) }
        }
    }
}
