import FerryAccount
import FerryMatrix

/// The to-device messages of emoji verification. They come with `/sync`, the same stream the
/// readers of encrypted rooms are tracked from (ReaderTracking), and one stream it must stay:
/// the server deletes a to-device message once any sync asks from a token past it, so a second
/// stream would see the messages the first took only by luck. While a verification listens,
/// every sync's verification messages from the person's own account are kept here until it
/// reads them, whichever sync took them.
extension Encryption {
    /// Keeps the person's verification messages from now on, for the listener the returned token
    /// names (until it stops listening; a newer listener takes over).
    public func listenForVerification(userID: String) -> Int {
        nextListener += 1
        verificationListening = VerificationListening(token: nextListener, userID: userID)
        return nextListener
    }

    /// Drops what is kept and keeps nothing more, if `token` still listens: a verification that
    /// ended late must not silence the one that began after it.
    public func stopListening(_ token: Int) {
        if verificationListening?.token == token { verificationListening = nil }
    }

    /// The verification messages syncs took since the last call; when there are none, a sync
    /// held open for up to `wait` milliseconds brings the next ones (or none). Only for the
    /// listener `token`.
    public func verificationMessages(
        session: Session, wait: Int, token: Int
    ) async throws(EncryptionFailure) -> [ToDeviceEvent] {
        if let kept = takeKept(token), !kept.isEmpty { return kept }
        startTracking(session)
        let since = tracking?.since
        let changes: RoomChanges
        do { changes = try await RoomChanges.since(since, wait: wait, http: http(session)) } catch {
            throw .server(error)
        }
        take(changes, asked: since)
        // Verification messages that came encrypted join the inbox once decrypted.
        if !inbox.isEmpty { await exclusively { await handleInbox(session: session, http: http(session)) } }
        return takeKept(token) ?? []
    }

    private func takeKept(_ token: Int) -> [ToDeviceEvent]? {
        guard verificationListening?.token == token, let kept = verificationListening?.inbox else { return nil }
        verificationListening?.inbox = []
        return kept
    }

    /// Keeps the verification messages of a sync's answer, from the person's own account only
    /// (anyone may send to-device messages; a stranger's must not crowd out the real ones), at
    /// most 256 between two reads.
    func keepVerificationMessages(_ events: [ToDeviceEvent]) {
        guard let listening = verificationListening else { return }
        let messages = events.filter {
            $0.type.hasPrefix("m.key.verification.") && $0.sender.utf8.elementsEqual(listening.userID.utf8)
        }
        verificationListening?.inbox += messages.prefix(max(0, 256 - listening.inbox.count))
    }
}

/// Who listens for verification messages, and what was kept for them.
struct VerificationListening {
    let token: Int
    let userID: String
    var inbox: [ToDeviceEvent] = []
}
