import FerryCore
import FerryMatrix
import Foundation

/// A picture as its event names it: what the picture reader learnt, and the thumbnail's upload.
struct SentPicture {
    var facts: PictureFacts
    var thumbnailURI: String?
}

extension Sender {
    /// How many attempts of a delivery may fail on its thumbnail's upload before the picture goes
    /// without one.
    static let thumbnailAttempts = 2

    /// The picture's facts and, when it needed one, its thumbnail uploaded for the room (encrypted
    /// in an encrypted room, like the file). Made again at each attempt: it takes a fraction of a
    /// second, and an earlier attempt's upload of it is a second copy on the server, never a
    /// second event. Nothing about the thumbnail fails the share: a thumbnail the server refuses
    /// is left out; an upload that may work later (the network, a 5xx) waits for the next attempt,
    /// twice at most.
    func picture(
        _ item: ShareItem, position: Int, of run: Run, through channel: any RoomChannel
    ) async throws(DeliveryFailure) -> SentPicture? {
        guard let pictures, item.contentType.hasPrefix("image/") else { return nil }
        let path = spool.path(for: run.shareID, position: position)
        let thumbnailPath = spool.thumbnailPath(for: run.shareID, position: position)
        defer { unlink(thumbnailPath) }
        guard let facts = await pictures.read(path, thumbnailPath: thumbnailPath) else { return nil }
        var picture = SentPicture(facts: facts)
        guard let thumbnail = facts.thumbnail else { return picture }
        do {
            picture.thumbnailURI = try await asking(run) { () async throws(MatrixError) in
                try await channel.upload(
                    path: thumbnailPath, size: thumbnail.size, contentType: thumbnail.mimetype,
                    filename: "thumbnail" + (thumbnail.mimetype == "image/png" ? ".png" : ".jpg"),
                    available: nil, progress: { _ in })
            }
        } catch {
            switch error {
            case .permanent(let reason):
                logger.notice(
                    "a picture goes without its thumbnail, which the server refused",
                    metadata: ["share": "\(run.shareID)", "reason": "\(reason)"])
            case .transient(let reason) where run.delivery.attempts >= Self.thumbnailAttempts:
                // An optional part never holds a share back for long: a server whose media
                // store keeps failing gets the picture without it.
                logger.notice(
                    "a picture goes without its thumbnail, whose upload failed again",
                    metadata: ["share": "\(run.shareID)", "reason": "\(reason)"])
            default: throw error
            }
            picture.facts.thumbnail = nil
        }
        return picture
    }
}
