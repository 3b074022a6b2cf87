import FerryAccount
import FerryMatrix

/// The to-device messages of emoji verification. They come with `/sync`, the same stream the
/// readers of encrypted rooms are tracked from (ReaderTracking), and one stream it must stay:
/// the server deletes a to-device message once any sync asks from a token past it, so a second
/// stream would see the messages the first took only by luck. While a verification listens,
/// every sync's verification messages are kept here until it reads them, whichever sync took them.
extension Encryption {
    /// Keeps verification messages from now on (until `stopListening`).
    public func listenForVerification() {
        if verificationInbox == nil { verificationInbox = [] }
    }

    /// Drops what is kept, and keeps nothing more.
    public func stopListening() {
        verificationInbox = nil
    }

    /// The verification messages syncs took since the last call; when there are none, a sync
    /// held open for up to `wait` milliseconds brings the next ones (or none). Only while listening.
    public func verificationMessages(session: Session, wait: Int) async throws(EncryptionFailure) -> [ToDeviceEvent] {
        if let kept = verificationInbox, !kept.isEmpty {
            verificationInbox = []
            return kept
        }
        if tracking?.accessToken != session.accessToken {
            tracking = Tracking(accessToken: session.accessToken)
        }
        let since = tracking?.since
        let changes: RoomChanges
        do { changes = try await RoomChanges.since(since, wait: wait, http: Self.http(session)) } catch { throw .server(error) }
        take(changes, asked: since)
        guard let kept = verificationInbox else { return [] }
        verificationInbox = []
        return kept
    }
}
