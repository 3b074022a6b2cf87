import FerryAccount
import FerryCore
import FerryEncryption
import FerryMatrix
import FerryOutbox
import FerrySender

/// The sign-in step: signing in moves every waiting share on by itself; signing out (or the
/// server ending the sign-in) makes queued shares wait for the next one.
extension ShareService {
    public func signIn(_ credentials: Credentials) async throws(ShareError) -> Session {
        let previous = account.signedInUser
        let session: Session
        do throws(SignInError) {
            session = try await account.signIn(credentials)
        } catch {
            throw ShareError(error)
        }
        // Another person's device keys and sessions are never this one's.
        if let previous, previous != session.userID { await encryption.forget(userID: previous) }
        prepareDevice(session)
        await directory.forget()
        // Signed in as someone else: what was on its way as the previous person waits for them.
        // Unparked, the sender parks them before its next pass (Sender.drain): never sent as this person.
        let parked =
            logger.attempt("parking the shares of others") {
                try outbox.park(sharesNotOf: session.userID, at: clock())
            } ?? []
        announceShares(parked)
        resumeWaitingShares(for: session.userID)
        announce(.accountChanged)
        return session
    }

    public func signOut() async {
        let user = account.signedInUser
        await account.signOut(remote: true)
        if let user { await encryption.forget(userID: user) }
        await directory.forget()
        parkQueuedShares()
        announce(.accountChanged)
    }

    /// The device's identity made and its keys uploaded, in the background: a sign-in answers at
    /// once, and a failure here is tried again before the first encrypted event. Then whether
    /// the owner verified it (a device signed in again under its id may be).
    private func prepareDevice(_ session: Session) {
        let encryption = encryption
        let logger = logger
        Task {
            do throws(EncryptionFailure) {
                try await encryption.prepareDevice(for: session)
                await verification.refresh()
            } catch {
                logger.warning(
                    "the device's encryption keys could not be uploaded yet",
                    metadata: ["error": "\(error.matrixError.message)"])
            }
        }
    }

    /// The homeserver no longer takes the token: the sender parked its shares already.
    /// The stored sign-in had no token any more (read after the start): shares routed to the
    /// queue meanwhile wait for a sign-in again, as after a 401.
    func signInLost() {
        _ = logger.attempt("moving the queue to awaiting-sign-in") {
            try outbox.move(from: [.queued, .sending], to: .awaitingSignIn, at: clock())
        }
        senderSignedOut()
    }

    func senderSignedOut() {
        Task { await directory.forget() }
        for share in shares() where share.state == .awaitingSignIn { announce(.shareChanged(share)) }
        announce(.accountChanged)
        announce(.signInRequired(reason: signInReason()))
        announcePendingWork()
    }

    public func loginFlows(homeserver: String) async throws(ShareError) -> LoginFlows {
        do {
            let url = try await FerryMatrix.SignIn.discover(homeserver)
            return try await FerryMatrix.SignIn.flows(MatrixHTTP(baseURL: url))
        } catch {
            // TRANSLATORS: completes "The homeserver {server} cannot be reached: {reason}."
            let notMatrix = tr("it does not answer as a Matrix homeserver")
            throw .homeserverUnreachable(
                homeserver,
                reason: error.kind == .transport || error.kind == .refused
                    ? error.message : notMatrix)
        }
    }

    public func destinations(query: String, limit: Int) async throws(ShareError) -> [DestinationEntry] {
        guard let session = account.current else { throw .notSignedIn }
        do {
            return try await directory.list(query: query, limit: limit, session: session, offline: !online)
        } catch {
            if error.isUnknownToken {
                account.invalidate(token: session.accessToken)
                parkQueuedShares()
                senderSignedOut()
                throw .notSignedIn
            }
            throw .homeserverUnreachable(session.homeserver, reason: error.message)
        }
    }

    /// Every share that waited for this person to sign in (or for anyone) goes where routing sends
    /// it now, as theirs; another person's shares wait on for them.
    private func resumeWaitingShares(for user: String) {
        for share in shares() where share.state == .awaitingSignIn && (share.account == nil || share.account == user) {
            let state = Routing.route(destinations: share.intent.destinations, signedIn: true)
            // A share the sender had begun keeps its deliveries: back to sending, not queued.
            let next = state == .queued && !share.deliveries.isEmpty ? .sending : state
            // Not moved, the share keeps waiting for sign-in and is resumed at the next one.
            let moved = logger.attempt("resuming a share after sign-in", share: share.id) {
                try outbox.update(
                    id: share.id, state: next, at: clock(), from: [.awaitingSignIn],
                    account: next == .awaitingDestination ? nil : user)
            }
            if let moved {
                announce(.shareChanged(moved))
            }
        }
        announcePendingWork()
        sender.wake(now: true)
    }

    private func parkQueuedShares() {
        // Unmoved, the shares stay queued: the sender, signed out, sends nothing, and the next
        // sign-in parks any that are not that person's.
        let moved =
            logger.attempt("moving the queue to awaiting-sign-in") {
                try outbox.move(from: [.queued, .sending], to: .awaitingSignIn, at: clock())
            } ?? []
        announceShares(moved)
        announcePendingWork()
    }

    /// Says that these shares changed, as they are now.
    private func announceShares(_ ids: [String]) {
        for id in ids {
            if let share = logger.attempt("reading a share", share: id, { try outbox.share(id: id) }) {
                announce(.shareChanged(share))
            }
        }
    }
}
