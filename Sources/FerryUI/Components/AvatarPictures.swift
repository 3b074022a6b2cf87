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
    /// The files known, by account and picture ("" where there is none).
    private var files: [String: String] = [:]
    /// Pictures that could not be fetched (the server away), and until when they are not asked
    /// for again: the rows are made anew as the person types.
    private var failed: [String: Int64] = [:]
    /// The avatars waiting for a picture being fetched.
    private var waiting: [String: [Weak]] = [:]
    /// What each avatar shows now: an answer that comes after it was given another picture (the
    /// main window's account changed) is not put on it.
    private var wanted: [ObjectIdentifier: String] = [:]
    /// The size asked for: twice a row's 32 pixels, for a display at double scale.
    static let size: UInt32 = 64

    private struct Weak { weak var avatar: Avatar? }

    init(service: ServiceClient) { self.service = service }

    /// Shows the picture `uri` names (nil: `account`'s own) on `avatar`, now when it is known,
    /// otherwise once it arrives.
    func show(_ uri: String?, as account: String?, on avatar: Avatar) {
        guard let account, !account.isEmpty else { return }
        let key = account + " " + (uri ?? "")
        wanted[ObjectIdentifier(avatar)] = key
        if let file = files[key] {
            avatar.showPicture(at: file)
            return
        }
        if let until = failed[key], until > SystemClock.monotonicMicroseconds() { return }
        let first = waiting[key] == nil
        waiting[key, default: []].append(Weak(avatar: avatar))
        guard first else { return }
        service.avatar(account: account, uri: uri, size: Self.size) { [weak self] result in
            guard let self else { return }
            var file = ""
            switch result {
            case .success(let path):
                file = path
                self.files[key] = path
            case .failure:
                self.failed[key] = SystemClock.monotonicMicroseconds() + 60_000_000
            }
            for entry in self.waiting.removeValue(forKey: key) ?? [] {
                guard let avatar = entry.avatar, self.wanted[ObjectIdentifier(avatar)] == key else { continue }
                avatar.showPicture(at: file)
            }
        }
    }

    /// Puts `avatar` back to its initials, and forgets what it was waiting for.
    func clear(_ avatar: Avatar) {
        wanted[ObjectIdentifier(avatar)] = nil
        avatar.showPicture(at: nil)
    }
}
