import FerryCore
import FerryMatrix
import Foundation

/// What a file's event says beyond its name and size, as the readers learnt it: a picture's or a
/// video's shown size, blurhash and thumbnail (a video's poster frame), and the thumbnail's upload;
/// a video's or a sound's duration.
struct SentPreview {
    var facts: PictureFacts?
    /// Milliseconds (`info.duration`).
    var duration: Int?
    var thumbnailURI: String?

    init(facts: PictureFacts?, duration: Int? = nil, thumbnailURI: String? = nil) {
        self.facts = facts
        self.duration = duration
        self.thumbnailURI = thumbnailURI
    }
}

extension Sender {
    /// How many attempts of a delivery may fail on its thumbnail's upload before the file goes
    /// without one.
    static let thumbnailAttempts = 2

    /// How many files' previews are remembered; past it they are all forgotten (and read again,
    /// should their shares still be sending).
    static let previewsRemembered = 64

    /// The file's preview: a picture's facts, or a video's or a sound's, and, when there is one,
    /// the thumbnail (a video's poster frame) uploaded for the room (encrypted in an encrypted
    /// room, like the file). The file is read once; the thumbnail is uploaded for each room and
    /// attempt (an earlier attempt's upload is a second copy on the server, never a second event).
    /// Nothing about the preview fails the share: a file its reader cannot read goes without one.
    func preview(
        _ item: ShareItem, position: Int, of run: Run, through channel: any RoomChannel
    ) async throws(DeliveryFailure) -> SentPreview? {
        let thumbnailPath = spool.thumbnailPath(for: run.shareID, position: position)
        guard var preview = await read(item, position: position, of: run.shareID) else { return nil }
        guard let thumbnail = preview.facts?.thumbnail else { return preview }
        do {
            preview.thumbnailURI = try await asking(run) { () async throws(MatrixError) in
                try await channel.upload(
                    path: thumbnailPath, size: thumbnail.size, contentType: thumbnail.mimetype,
                    filename: "thumbnail" + (thumbnail.mimetype == "image/png" ? ".png" : ".jpg"),
                    available: nil, progress: { _ in })
            }
        } catch {
            switch error {
            case .permanent(let reason):
                logger.notice(
                    "a file goes without its thumbnail, which the server refused",
                    metadata: ["share": "\(run.shareID)", "reason": "\(reason)"])
            case .transient(let reason) where run.delivery.attempts >= Self.thumbnailAttempts:
                // An optional part never holds a share back for long: a server whose media
                // store keeps failing gets the file without it.
                logger.notice(
                    "a file goes without its thumbnail, whose upload failed again",
                    metadata: ["share": "\(run.shareID)", "reason": "\(reason)"])
            default: throw error
            }
            preview.facts?.thumbnail = nil
        }
        return preview
    }

    /// What the file's reader says, asked once for the file: its thumbnail, kept beside the staged
    /// copy, goes with the share's directory. Asked again when that thumbnail is gone.
    private func read(_ item: ShareItem, position: Int, of shareID: String) async -> SentPreview? {
        let key = "\(shareID)/\(position)"
        let path = spool.path(for: shareID, position: position)
        let thumbnailPath = spool.thumbnailPath(for: shareID, position: position)
        if let known = previewsRead[key], known?.facts?.thumbnail == nil || access(thumbnailPath, R_OK) == 0 {
            return known
        }
        let preview: SentPreview?
        switch Composition.messageType(forContentType: item.contentType) {
        case "m.image":
            preview = await pictures?.read(path, thumbnailPath: thumbnailPath).map { SentPreview(facts: $0) }
        case "m.video", "m.audio":
            preview = await media?.read(path, posterPath: thumbnailPath).map {
                SentPreview(facts: $0.picture, duration: $0.duration)
            }
        default: return nil
        }
        if previewsRead.count >= Self.previewsRemembered { previewsRead = [:] }
        previewsRead[key] = .some(preview)
        return preview
    }
}
