import FerryAccount
import FerryCore
import FerryMatrix
import FerryOutbox
import FerrySender

/// What signing in and out does to shares: signing in moves every share that waited for this
/// person on by itself (AccountService signs in, then asks this); signing an account out (or the
/// server ending its sign-in) makes its queued shares wait for its next one, and only its.
extension ShareService {
    /// Signed in as `user`: what was on its way as an account not signed in waits for it, and
    /// what waited for this person (or anyone) goes on.
    func signedIn(as user: String) async {
        await directory.forget()
        // Unparked, the sender parks them before its next pass (Sender.drain): never sent as another.
        let signedIn = Set(accounts.signedIn.map(\.userID)).union([user])
        let parked =
            logger.attempt("parking the shares of accounts not signed in") {
                try outbox.park(sharesNotOf: signedIn, at: clock())
            } ?? []
        announceShares(parked)
        resumeWaitingShares(for: user)
    }

    /// `user` signed out: its queued shares wait for its next sign-in.
    func signedOut(_ user: String) async {
        await directory.forget()
        parkQueuedShares(of: user)
    }

    /// The homeserver no longer takes the token: the sender parked its shares already.
    /// The stored sign-in had no token any more (read after the start): shares routed to the
    /// queue meanwhile wait for a sign-in again, as after a 401.
    func signInLost(_ user: String) {
        parkQueuedShares(of: user)
        senderSignedOut(user)
    }

    func senderSignedOut(_ user: String) {
        Task { await directory.forget() }
        for share in shares() where share.state == .awaitingSignIn { announce(.shareChanged(share)) }
        announce(.accountChanged)
        announce(.signInRequired(reason: signInReason()))
        announcePendingWork()
    }

    /// Where a share can go, of every signed-in account, each entry saying whose it is. An
    /// account whose server does not answer leaves the others' rooms listed; with none listed, the
    /// first failure is the answer.
    public func destinations(query: String, limit: Int) async throws(ShareError) -> [DestinationEntry] {
        let sessions = accounts.signedIn.compactMap(\.current)
        guard !sessions.isEmpty else { throw .notSignedIn }
        var lists: [[DestinationEntry]] = []
        var failure: ShareError?
        for session in sessions {
            do {
                let list = try await directory.list(query: query, limit: 0, session: session, offline: !online)
                // Only the whole list says everything an account has.
                if query.isEmpty { owners.record(list, of: session.userID) }
                lists.append(list)
            } catch {
                if error.isUnknownToken {
                    accounts.invalidate(token: session.accessToken)
                    parkQueuedShares(of: session.userID)
                    senderSignedOut(session.userID)
                    failure = failure ?? .notSignedIn
                } else {
                    logger.notice(
                        "an account's rooms could not be listed",
                        metadata: ["user": "\(session.userID)", "reason": "\(error.message)"])
                    failure = failure ?? .homeserverUnreachable(session.homeserver, reason: error.message)
                }
            }
        }
        if lists.isEmpty, let failure { throw failure }
        return await directory.merged(lists, limit: limit)
    }

    /// Every share that waited for this person to sign in (or for anyone) goes where routing sends
    /// it now, as theirs; another person's shares wait on for them. One with nothing left to send
    /// (parked between its last delivery and its settling) goes on too, and the sender settles it.
    private func resumeWaitingShares(for user: String) {
        for share in shares()
        where share.state == .awaitingSignIn
            && (share.account == nil || share.accountsStillSending.isEmpty || share.accountsStillSending.contains(user))
        {
            let state = Routing.route(destinations: share.intent.destinations, signedIn: true)
            // A share the sender had begun keeps its deliveries: back to sending, not queued.
            let next = state == .queued && !share.deliveries.isEmpty ? .sending : state
            // Not moved, the share keeps waiting for sign-in and is resumed at the next one.
            let moved = logger.attempt("resuming a share after sign-in", share: share.id) {
                try outbox.update(
                    id: share.id, state: next, at: clock(), from: [.awaitingSignIn],
                    account: share.account ?? (next == .awaitingDestination ? nil : user))
            }
            if let moved {
                announce(.shareChanged(moved))
            }
        }
        announcePendingWork()
        sender.wake(now: true)
    }

    private func parkQueuedShares(of user: String) {
        // Unmoved, the shares stay queued: the sender parks those of an account not signed in
        // before its next pass. A share to other accounts' rooms too waits once none is signed in.
        let stillSignedIn = Set(accounts.signedIn.map(\.userID)).subtracting([user])
        let moved =
            logger.attempt("moving the account's queue to awaiting-sign-in") {
                try outbox.parkShares(of: user, stillSignedIn: stillSignedIn, at: clock())
            } ?? []
        announceShares(moved)
        announcePendingWork()
        // A share of another account's rooms too goes on as that one, or waits once none is left.
        sender.wake()
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
