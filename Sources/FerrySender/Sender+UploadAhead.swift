import FerryCore
import FerryMatrix
import FerryOutbox
import FerryStaging

/// Uploading a large file while it is still being copied into the spool, so that staging and
/// uploading overlap instead of following each other: the share's wait is nearly the upload alone.
///
/// Only for a share that goes straight to the queue (its destinations chosen, a person signed in),
/// and only when every destination is a plain room (the file goes up as it is) or every one is an
/// encrypted room (it goes up encrypted, and its key into each room's event): nothing reaches the
/// server that would not have been sent anyway, and nothing plain for an encrypted room (the upload
/// goes through the rooms' channel). Whatever goes wrong, the sender uploads the staged copy itself
/// when it reaches the file, as it does without this.
extension Sender {
    /// Smaller files are copied in a moment; starting their upload early saves nothing.
    public static let uploadAheadMinimumSize: UInt64 = 8 << 20

    /// Early uploads for a share that goes out as `userID`'s account.
    public nonisolated func uploadingAhead(as userID: String) -> any UploadAhead {
        UploadAheadAs(sender: self, userID: userID)
    }

    nonisolated func begin(
        shareID: String, position: Int, path: String, item: ShareItem,
        destinations: [String], as userID: String
    ) -> GrowingFile? {
        guard item.size >= Self.uploadAheadMinimumSize, let session = account.sessionIfRead(of: userID),
            !destinations.isEmpty,
            // A person's chat may not exist yet; the sender creates it, once.
            destinations.allSatisfy({ Destination.kind(of: $0) == .roomID || Destination.kind(of: $0) == .roomAlias })
        else { return nil }
        let file = GrowingFile(expectedSize: item.size)
        let progress = ProgressRelay()
        let task = Task {
            await self.uploadAhead(
                item, from: path, file: file, to: destinations, session: session,
                progress: progress)
        }
        earlyUploads.add(
            .init(task: task, file: file, progress: progress, userID: userID),
            for: .init(shareID: shareID, position: position))
        return file
    }

    public nonisolated func abandon(shareID: String) {
        earlyUploads.abandon(shareID: shareID)
    }

    /// Cancels a share for a person: compare-and-set in the outbox, at a moment when no event
    /// request of the share can slip through (SendGate). Returns the cancelled share and the
    /// destinations whose event was already on its way, or nil when its state no longer allows it.
    public nonisolated func cancel(
        shareID: String, at time: Int64
    ) throws(OutboxError) -> (share: Share, tooLateFor: [String])? {
        let outcome = try gate.cancel(shareID: shareID, outbox: outbox, at: time)
        if outcome != nil { earlyUploads.abandon(shareID: shareID) }
        return outcome
    }

    /// The upload itself; nil when it did not happen or failed.
    private func uploadAhead(
        _ item: ShareItem, from path: String, file: GrowingFile, to destinations: [String],
        session: Session, progress: ProgressRelay
    ) async -> EarlyUploads.Uploaded? {
        // However it ends, the copy keeps no bytes for this upload any more (until the sender took
        // the early upload, a failed one held the copy's window).
        defer { file.readerStopped() }
        let homeserver = connect(session)
        do {
            var channels: [any RoomChannel] = []
            for destination in destinations {
                let roomID = try await DestinationResolver(rooms: homeserver).roomID(for: destination)
                channels.append(try await channel(to: roomID, on: homeserver))
            }
            // One upload serves every room only when they are all of one kind.
            guard let first = channels.first, channels.allSatisfy({ $0.isEncrypted == first.isEncrypted }) else {
                return nil
            }
            if let limit = try await serverUploadLimit(homeserver, at: session.homeserver), item.size > limit {
                return nil
            }
            let uri = try await first.upload(
                path: path, size: item.size, contentType: item.contentType, filename: item.name,
                available: file, progress: { progress.update($0) })
            return .init(uri: uri, encrypted: first.isEncrypted)
        } catch {
            logger.debug("early upload not used", metadata: ["error": "\(error)"])
            return nil
        }
    }

    /// The content URI of an early upload of this file, once it is done; nil when there was none
    /// or it failed. `progress` hears its bytes sent from now on.
    /// Only an upload of the room's kind is used: plain for a plain room, encrypted for an
    /// encrypted one (a room's encryption may have changed while the file was staged).
    /// An upload is on its account's server: a delivery as another account does not take it.
    func earlyUpload(
        shareID: String, position: Int, as userID: String, encrypted: Bool,
        progress: @escaping @Sendable (UInt64) -> Void
    ) async -> String? {
        guard let upload = earlyUploads.take(shareID: shareID, position: position, as: userID) else { return nil }
        upload.progress.listen(progress)
        guard let uploaded = await upload.task.value, uploaded.encrypted == encrypted else { return nil }
        logger.info("file uploaded while it was staged", metadata: ["share": "\(shareID)", "item": "\(position)"])
        return uploaded.uri
    }
}

/// The sender's early uploads for one account's share (what the stager is given).
struct UploadAheadAs: UploadAhead {
    let sender: Sender
    let userID: String

    func begin(shareID: String, position: Int, path: String, item: ShareItem, destinations: [String]) -> GrowingFile? {
        sender.begin(
            shareID: shareID, position: position, path: path, item: item, destinations: destinations, as: userID)
    }

    func abandon(shareID: String) { sender.abandon(shareID: shareID) }
}
