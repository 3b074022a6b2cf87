import FerryCore
import FerryStaging
import NIOConcurrencyHelpers

/// Uploads started while their files were still being copied into the spool, until the sender
/// reaches their step and takes the content URI (or uploads again, when one failed).
///
/// Only memory: after a crash the sender simply uploads the staged file, as it always could.
final class EarlyUploads: Sendable {
    struct Key: Hashable {
        let shareID: String
        let position: Int
    }

    /// One upload under way or done: its outcome (nil when it failed), the copy it reads, and who
    /// hears its progress.
    /// What an early upload left on the server: plain, or encrypted for encrypted rooms only.
    struct Uploaded: Sendable {
        let uri: String
        let encrypted: Bool
    }

    struct Upload: Sendable {
        let task: Task<Uploaded?, Never>
        let file: GrowingFile
        let progress: ProgressRelay
        /// The account it uploads as: its file is on that account's server.
        let userID: String
    }

    private let uploads = NIOLockedValueBox<[Key: Upload]>([:])

    func add(_ upload: Upload, for key: Key) {
        uploads.withLockedValue { $0[key] = upload }
    }

    /// The upload of a share's file as `userID`, handed over once.
    func take(shareID: String, position: Int, as userID: String) -> Upload? {
        uploads.withLockedValue { uploads in
            let key = Key(shareID: shareID, position: position)
            guard uploads[key]?.userID == userID else { return nil }
            return uploads.removeValue(forKey: key)
        }
    }

    /// Stops and forgets a share's uploads (all of them with nil; with `userID`, only those as that
    /// account): the copy each reads is given up, which ends its request within a chunk.
    func abandon(shareID: String?, userID: String? = nil) {
        let gone = uploads.withLockedValue { uploads in
            let keys = uploads.filter { key, upload in
                (shareID == nil || key.shareID == shareID) && (userID == nil || upload.userID == userID)
            }.map(\.key)
            return keys.compactMap { uploads.removeValue(forKey: $0) }
        }
        for upload in gone {
            upload.file.fail()
            upload.task.cancel()
        }
    }
}

/// Passes an upload's progress on to whoever listens, once someone does: an early upload starts
/// before its share is in the outbox, where progress is recorded.
final class ProgressRelay: Sendable {
    private let state = NIOLockedValueBox<(sent: UInt64, listener: (@Sendable (UInt64) -> Void)?)>((0, nil))

    func update(_ sent: UInt64) {
        let listener = state.withLockedValue { state in
            state.sent = sent
            return state.listener
        }
        listener?(sent)
    }

    func listen(_ listener: @escaping @Sendable (UInt64) -> Void) {
        let sent = state.withLockedValue { state in
            state.listener = listener
            return state.sent
        }
        if sent > 0 { listener(sent) }
    }
}
