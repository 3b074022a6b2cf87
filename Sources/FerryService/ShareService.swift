import FerryAccount
import FerryCore
import FerryEncryption
import FerryOutbox
import FerrySender
import FerryStaging
import Logging
import Synchronization

/// What the service does with shares, independent of how a request arrived (Share1, Open, the
/// command line): accept, look up, list, cancel. Every change is announced (`announce`, a ServiceEvent).
public final class ShareService: Sendable {
    let outbox: Outbox
    let spool: Spool
    let intake: ShareIntake
    /// Every signed-in account; a share goes out as its own.
    let accounts: Accounts
    let limits: Limits
    let logger: Logger
    /// Where changes are announced: the bus object and the desktop, wired after both are built.
    let announcements: WiredLater<@Sendable (ServiceEvent) -> Void>
    /// Announces `event` (nothing before the wiring, which is done before any call arrives).
    func announce(_ event: ServiceEvent) { announcements.value(event) }
    let clock: @Sendable () -> Int64
    /// Sends the queue; it also uploads large files of queued shares while they are being staged.
    /// What it reports comes through `sender.events` (`listen`).
    let sender: Sender
    /// The device's verification: by recovery key, by emoji, and cross-signing set up.
    public let verification: VerificationService
    /// Holds new shares' announcements until the start-up has run.
    let startUp = WiredLater<StartUp?>(nil)
    let directory: DestinationDirectory
    /// Which accounts have which destinations, for a share that names no account.
    let owners = DestinationOwners()
    /// Whether the homeserver answered the last request (the sender says; Online reads it).
    var online: Bool {
        get { onlineState.load(ordering: .relaxed) }
        set { onlineState.store(newValue, ordering: .relaxed) }
    }
    private let onlineState = Atomic<Bool>(true)

    init(
        outbox: Outbox, spool: Spool, limits: Limits, accounts: Accounts, sender: Sender,
        verification: VerificationService, announcements: WiredLater<@Sendable (ServiceEvent) -> Void>, logger: Logger,
        clock: @escaping @Sendable () -> Int64 = SystemClock.microseconds
    ) {
        self.outbox = outbox
        self.sender = sender
        self.verification = verification
        self.announcements = announcements
        self.spool = spool
        self.accounts = accounts
        self.limits = limits
        self.logger = logger
        self.clock = clock
        directory = DestinationDirectory(outbox: outbox, clock: clock, logger: logger)
        intake = ShareIntake(
            outbox: outbox, stager: Stager(spool: spool, limits: limits), limits: limits,
            uploadAhead: { sender.uploadingAhead(as: $0) },
            accounts: ShareIntake.Accounts(
                choose: { [owners] in Self.accounts(for: $0, accounts: accounts, owners: owners) },
                isSignedIn: { accounts.account($0) != nil }, latest: { accounts.latest?.userID }),
            clock: clock)
    }

    /// The account each of `destinations` goes out as when the share names none: the one signed-in
    /// account that has them all (as the destination lists said), or else each destination's own,
    /// or the one signed in last (DestinationOwners.accounts). Empty when nobody is signed in.
    static func accounts(for destinations: [String], accounts: Accounts, owners: DestinationOwners) -> [String] {
        owners.accounts(for: destinations, among: accounts.signedIn.map(\.userID))
    }

    /// Hears what the sender and the emoji verifier report, each in its order, for the life of the
    /// service. Called by the start-up, before the sender starts: neither reports before then (every
    /// call that reaches the verifier waits for the start-up), and a cold start's path to its first
    /// reply does without these tasks.
    func listen() {
        let (senderEvents, verifications) = (sender.events, verification.emojiVerifier.changes)
        Task { [weak self] in
            for await event in senderEvents {
                guard let self else { return }
                switch event {
                case .shareChanged(let share): announce(.shareChanged(share))
                case .finished(let share): senderFinished(share)
                case .signedOut(let user): senderSignedOut(user)
                case .onlineChanged(let online):
                    self.online = online
                    announce(.accountChanged)
                }
            }
        }
        Task { [weak self] in
            for await state in verifications {
                guard let self else { return }
                verification.emojiVerificationChanged(state)
            }
        }
    }

    public func share(_ request: ShareRequest, activationToken: String? = nil) throws(ShareError) -> Share {
        let share: Share
        do {
            share = try intake.accept(request)
        } catch {
            logger.notice("share refused", metadata: ["error": "\(error.shortName)", "source": "\(request.source)"])
            throw error
        }
        logger.info(
            "share accepted",
            metadata: [
                "id": "\(share.id)", "state": "\(share.state.rawValue)", "items": "\(share.intent.items.count)",
                "type": "\(share.intent.contentType)", "source": "\(share.intent.source)",
            ])
        if startUp.value?.holdBack(share, activationToken: activationToken) != true {
            announceAccepted(share, activationToken: activationToken)
        }
        return share
    }

    /// A new share's ShareChanged, the sign-in or person it waits for, the sender's wake-up; for a
    /// share accepted before the start-up, from the start-up (StartUp), after the reply.
    func announceAccepted(_ share: Share, activationToken: String?) {
        announce(.shareChanged(share))
        if share.state == .awaitingSignIn { announce(.signInRequired(reason: signInReason())) }
        if share.state.awaitsPerson { announce(.needsPerson(share, activationToken: activationToken)) }
        if share.state.isPendingWork {
            announcePendingWork()
            sender.wake()
        }
    }

    public func share(id: String) throws(ShareError) -> Share {
        // A database that cannot be read answers as for an unknown id (logged): the caller's next
        // call asks again, and nothing was changed.
        guard let share = logger.attempt("reading a share", share: id, { try outbox.share(id: id) }) else {
            throw .noSuchShare(id)
        }
        return share
    }

    public func shares() -> [Share] { logger.attempt("listing the shares") { try outbox.shares() } ?? [] }

    public func cancel(id: String) throws(ShareError) -> Share {
        let current = try share(id: id)
        guard current.state.isCancellable else { throw .notCancellable(id, state: current.state) }
        let outcome: (share: Share, tooLateFor: [String])?
        do throws(OutboxError) {
            outcome = try sender.cancel(shareID: id, at: clock())
        } catch {
            throw .storageFailed(.cancellation, reason: error.reason)
        }
        // Compare-and-set: the sender settled it (or another Cancel won) since it was read.
        guard let outcome else { throw .notCancellable(id, state: stateNow(of: id) ?? current.state) }
        // Committed first: a crash now leaves a cancelled share with files the next start sweeps.
        spool.remove(shareID: id)
        logger.info("share cancelled", metadata: ["id": "\(id)", "too-late-for": "\(outcome.tooLateFor.count)"])
        announce(.shareChanged(outcome.share))
        announcePendingWork()
        if !outcome.tooLateFor.isEmpty { throw .tooLateToCancel(id, destinations: outcome.tooLateFor) }
        return outcome.share
    }

    /// Removes spool directories that no live share needs: left by a crash between staging and
    /// commit, or by a crash after a share was sent or cancelled. Runs at every start, before the
    /// first call is answered: an empty spool (the usual case) costs one directory read.
    func sweepSpool() {
        let staged = spool.shareIDs()
        // Unread, nothing is removed: the next start sweeps.
        guard !staged.isEmpty,
            let needed = logger.attempt(
                "reading which shares need their files",
                {
                    try outbox.idsNeedingFiles()
                })
        else { return }
        for id in staged where !needed.contains(id) {
            logger.debug("removing leftover spool directory", metadata: ["id": "\(id)"])
            spool.remove(shareID: id)
        }
    }

    /// Tells the lifetime whether any share waits for Ferry itself.
    func announcePendingWork() {
        // Unread, the lifetime is told nothing is pending: the service may end, and the next start
        // (a call, the autostart at login) finds the work.
        let pending = logger.attempt("reading whether work is pending") { try outbox.hasPendingWork() } ?? false
        announce(.pendingWorkChanged(pending))
    }

    /// A share's state as stored now, for the sentence of a refusal; nil (logged) when unread.
    func stateNow(of id: String) -> ShareState? {
        logger.attempt("reading a share's state", share: id) { try outbox.state(of: id) }
    }

    func signInReason() -> String {
        let waiting = logger.attempt("counting the shares waiting for sign-in") {
            try outbox.count(in: .awaitingSignIn, upTo: SignInReason.countLimit)
        }
        return SignInReason.sentence(waiting: waiting ?? 1)
    }
}
