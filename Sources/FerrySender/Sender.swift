import FerryAccount
import FerryCore
import FerryMatrix
import FerryOutbox
import FerryStaging
import Foundation
import Logging

/// The in-process sender: takes queued shares from the outbox, oldest first, and delivers each
/// to each of its destinations as Matrix events, exactly once.
///
/// Exactly once rests on the outbox: a step's transaction id is committed before its request, its
/// content URI after its upload, its event id after the server's answer. After a crash the sender
/// resumes at the first step without an event id and repeats the request with the same transaction
/// id, which the server answers with the event it already has (per device: MSC3970). That same
/// answer is why an event id (and a content URI) is committed without waiting for the disk
/// (Outbox.writeProgress): losing it to a power cut costs one repeated request, never a second message.
public actor Sender {
    let outbox: Outbox
    let spool: Spool
    let account: any SessionSource
    /// The homeserver as a session sees it: over HTTP in the service, in memory in unit tests.
    let connect: @Sendable (Session) -> any Homeserver
    let backoff: Backoff
    /// Reads each picture for its event (size, thumbnail, blurhash); without it pictures go as
    /// they are, with the size their header gives.
    let pictures: (any PictureReading)?
    /// Reads each video and sound for its event (duration, size, poster frame); without it they
    /// go without.
    let media: (any MediaReading)?
    /// What the readers said of each file, by share and position (nil: nothing to say), read once
    /// for all its rooms and attempts; the thumbnail stays beside the staged copy (Sender+Previews).
    var previewsRead: [String: SentPreview?] = [:]
    let logger: Logger
    let clock: @Sendable () -> Int64
    /// What the sender reports, in order: read by the service that owns it (one reader).
    public nonisolated let events: AsyncStream<SenderEvent>
    private let reports: AsyncStream<SenderEvent>.Continuation
    /// The share now being sent (nil: none). Called directly, not through `events`: the crash
    /// witness must know it before the first request, or a crash would name no share.
    let working: @Sendable (_ shareID: String?) -> Void
    private var wakeRequested = false
    private var retryEverythingNow = false
    private var waiter: CheckedContinuation<Void, Never>?
    private var online = true
    /// Which rooms are encrypted, as far as the sender knows (RoomPolicy).
    var roomPolicy = RoomPolicy()
    /// Each homeserver's upload limit, by its URL, and until when it is taken as known.
    var uploadLimits: [String: (bytes: UInt64?, until: Int64)] = [:]
    /// Uploads begun while their files were being staged (Sender+UploadAhead).
    let earlyUploads = EarlyUploads()
    /// Makes Cancel and the last check before an event request one step each (SendGate).
    let gate = SendGate()

    public init(
        outbox: Outbox, spool: Spool, account: any SessionSource, backoff: Backoff, logger: Logger,
        clock: @escaping @Sendable () -> Int64, working: @escaping @Sendable (String?) -> Void = { _ in },
        connect: @escaping @Sendable (Session) -> any Homeserver = { MatrixClient(session: $0) },
        pictures: (any PictureReading)? = nil, media: (any MediaReading)? = nil
    ) {
        self.pictures = pictures
        self.media = media
        self.outbox = outbox
        self.spool = spool
        self.account = account
        self.connect = connect
        self.backoff = backoff
        (events, reports) = AsyncStream.makeStream(of: SenderEvent.self)
        self.working = working
        self.logger = logger
        self.clock = clock
    }

    func tell(_ event: SenderEvent) {
        reports.yield(event)
    }

    /// Runs the sender for the life of the process.
    public nonisolated func start() {
        Task { await self.run() }
    }

    /// New work, a sign-in, or a retry: look at the outbox again. `now` also retries deliveries
    /// that wait for their backoff (the network came back; a person pressed Retry).
    public nonisolated func wake(now: Bool = false) {
        Task { await self.signal(retryNow: now) }
    }

    private func signal(retryNow: Bool) {
        if retryNow { retryEverythingNow = true }
        if let waiter {
            self.waiter = nil
            waiter.resume()
        } else {
            wakeRequested = true
        }
    }

    private func run() async {
        while true {
            let nextRetry = await drain()
            await sleep(until: nextRetry)
        }
    }

    private func sleep(until time: Int64?) async {
        if wakeRequested {
            wakeRequested = false
            return
        }
        var timer: Task<Void, Never>?
        if let time {
            // Never more than an hour, never negative, whatever time the outbox holds.
            let delay = UInt64(min(max(0, ServerNumbers.difference(time, clock())), Backoff.longest)) * 1000
            timer = Task { [weak self] in
                try? await Task.sleep(nanoseconds: delay)
                await self?.signal(retryNow: false)
            }
        }
        await withCheckedContinuation { waiter = $0 }
        timer?.cancel()
        wakeRequested = false
    }

    /// One pass over the queue, oldest share first, each as its own account; returns when the
    /// next delivery waiting for its backoff is due.
    private func drain() async -> Int64? {
        let retryNow = retryEverythingNow
        retryEverythingNow = false
        var nextRetry: Int64?
        // At a start, the stored sign-ins' tokens are read in the background (Accounts).
        await account.tokenRead()
        while true {
            let sessions = account.sessions
            guard !sessions.isEmpty else { break }
            // A share is never sent as someone else (the service parks them at a sign-out; this
            // holds whatever reached the queue since).
            let parked = logger.attempt("parking the shares of accounts not signed in") {
                try outbox.park(sharesNotOf: Set(sessions.map(\.userID)), at: clock())
            }
            announceParked(parked ?? [])
            // A queue that cannot be read is tried again at the next wake-up (a new share, the network, a retry time).
            let queued = logger.attempt("reading the queue") { try outbox.shares(in: [.queued, .sending]) } ?? []
            let signedIn = SignedIn(sessions: sessions)
            let shares = sessions.flatMap { session in
                takeUp(queued.filter { signedIn.takingUp($0)?.userID == session.userID }, as: session, of: signedIn)
            }.sorted { $0.created < $1.created }
            var progressed = false
            nextRetry = nil
            for share in shares {
                switch await send(share, retryNow: retryNow) {
                case .signedOut: continue
                case .waiting(let time): nextRetry = min(nextRetry ?? time, time)
                case .finished: progressed = true
                }
            }
            // Shares that arrived during the pass are taken in the next one, without waiting.
            if !progressed || !wakeRequested { break }
            wakeRequested = false
        }
        return nextRetry
    }

    enum Outcome { case finished, waiting(until: Int64), signedOut }

    /// Takes every queued share up in one transaction (deliveries, steps, transaction ids) instead
    /// of one commit each on the way; the shares already taken up are returned as they are.
    private func takeUp(_ shares: [Share], as session: Session, of signedIn: SignedIn) -> [Share] {
        let fresh = shares.filter { $0.state == .queued || $0.deliveries.isEmpty }
        guard !fresh.isEmpty else { return shares }
        let takeovers = fresh.map { share in
            Outbox.Takeover(
                id: share.id, steps: Composition.steps(for: share.intent),
                bytesTotal: share.intent.items.filter { $0.kind == .file }.reduce(0) { $0 + $1.size })
        }
        // Not taken up here, each share is taken up on its own in send(_:session:retryNow:).
        guard
            let begun = logger.attempt(
                "taking up the queue",
                {
                    try outbox.beginSending(takeovers, as: session.userID, signIns: signedIn.signIns, at: clock())
                })
        else {
            return shares
        }
        begun.forEach { tell(.shareChanged($0)) }
        let byID = Dictionary(uniqueKeysWithValues: begun.map { ($0.id, $0) })
        return shares.map { byID[$0.id] ?? $0 }
    }

    private func send(_ original: Share, retryNow: Bool) async -> Outcome {
        // As signed in now: an account signed out meanwhile (here, or by the server) leaves its
        // shares waiting, while a share of another account's rooms too goes on as that one.
        let now = SignedIn(sessions: account.sessions)
        guard let taker = now.takingUp(original) else { return .signedOut }
        working(original.id)
        defer { working(nil) }
        var share = original
        if share.state == .queued || share.deliveries.isEmpty {
            let steps = Composition.steps(for: share.intent)
            let bytes = share.intent.items.filter { $0.kind == .file }.reduce(0) { $0 + $1.size }
            // A share that cannot be taken up stays queued for the next pass (nil: cancelled meanwhile).
            guard
                let begun = logger.attempt(
                    "taking up a share", share: share.id,
                    {
                        try outbox.beginSending(
                            id: share.id, steps: steps, bytesTotal: bytes, as: taker.userID,
                            signIns: now.signIns, at: clock())
                    })
            else {
                return .finished
            }
            share = begun
            tell(.shareChanged(share))
        }
        var nextRetry: Int64?
        // Deliveries left for an account that is not signed in: the share waits for it once the
        // others are done.
        var waitsForSignIn = false
        for (position, delivery) in share.deliveries.enumerated() where !delivery.state.isFinal {
            // Each delivery goes out as its own account (a share may go to several accounts' rooms),
            // as signed in now: one may have signed in since the pass began.
            guard let user = share.account(at: position) ?? now.latest, let session = account.session(of: user)
            else {
                waitsForSignIn = true
                continue
            }
            if var retryAt = delivery.retryAt, retryAt > clock(), !retryNow {
                // A retry time beyond an hour (written by an older Ferry, or a changed clock) is
                // brought back to an hour, or the share would wait for it forever.
                if ServerNumbers.difference(retryAt, clock()) > Backoff.longest {
                    retryAt = clock() + Backoff.longest
                    change(share.id, position) { $0.retryAt = retryAt }
                }
                nextRetry = min(nextRetry ?? retryAt, retryAt)
                continue
            }
            do throws(DeliveryFailure) {
                let recorded = try await deliver(share, position: position, session: session)
                if let recorded, recorded.state == .sent {
                    // The last event settled the share in its own transaction.
                    setOnline(true)
                    settle(recorded)
                    return .finished
                }
                if recorded == nil {
                    change(share.id, position) {
                        $0.state = .sent
                        $0.bytesSent = $0.bytesTotal
                        $0.retryAt = nil
                        $0.attempts = 0
                    }
                }
                setOnline(true)
            } catch {
                switch error {
                case .cancelled:
                    return .finished
                case .unauthorized(let token):
                    guard account.session(of: session.userID)?.accessToken == token else {
                        // The token of a sign-in that a newer one replaced, and ended at the
                        // server: nobody is signed out. This delivery goes on under the new
                        // sign-in in the next pass (which the sign-in wakes); the others go now.
                        continue
                    }
                    account.invalidate(token: token)
                    // Its uploads end too; other accounts' go on.
                    earlyUploads.abandon(shareID: nil, userID: session.userID)
                    waitsForSignIn = true
                    // Not moved, they are moved at the next sign-in's start (the service parks and resumes).
                    let moved = logger.attempt("moving the account's queue to awaiting-sign-in") {
                        try outbox.parkShares(
                            of: session.userID, stillSignedIn: Set(account.sessions.map(\.userID)), at: clock())
                    }
                    announceParked(moved ?? [])
                    tell(.signedOut(userID: session.userID))
                    // A share to another account's rooms too goes on with them.
                    continue
                case .transient(let error):
                    let attempts = delivery.attempts + 1
                    let retryAt =
                        clock()
                        + backoff.delay(
                            attempt: attempts,
                            retryAfterMilliseconds: error.retryAfterMilliseconds,
                            jitter: Double.random(in: 0..<1))
                    logger.notice(
                        "will retry",
                        metadata: [
                            "share": "\(share.id)", "destination": "\(delivery.destination)",
                            "error": "\(error)", "attempt": "\(attempts)",
                        ])
                    change(share.id, position) {
                        $0.state = .retrying
                        $0.retryAt = retryAt
                        $0.attempts = attempts
                    }
                    if error.kind == .transport { setOnline(false) }
                    nextRetry = min(nextRetry ?? retryAt, retryAt)
                case .permanent(let error):
                    logger.notice("delivery failed", metadata: ["share": "\(share.id)", "error": "\(error.shortName)"])
                    change(share.id, position) {
                        $0.state = .failed
                        $0.failure = Share.Failure(name: error.name, message: error.message)
                        $0.retryAt = nil
                    }
                    setOnline(true)
                }
            }
        }
        finish(share.id)
        if let nextRetry { return .waiting(until: nextRetry) }
        if waitsForSignIn {
            waitForSignIn(share.id)
            return .signedOut
        }
        return .finished
    }

    /// Says that these shares now wait for a sign-in, as they are now.
    private func announceParked(_ ids: [String]) {
        for id in ids {
            if let share = logger.attempt("reading a parked share", share: id, { try outbox.share(id: id) }) {
                tell(.shareChanged(share))
            }
        }
    }

    /// A share whose deliveries left are all of accounts not signed in waits for one of them to
    /// sign in (the service resumes it then). One that signed in while it was parked (the
    /// service found it still sending, and left it) takes it up again at once.
    private func waitForSignIn(_ shareID: String) {
        guard
            let parked = logger.attempt(
                "parking a share for its accounts' sign-in", share: shareID,
                { try outbox.update(id: shareID, state: .awaitingSignIn, at: clock(), from: [.sending]) })
        else { return }
        tell(.shareChanged(parked))
        guard parked.accountsStillSending.contains(where: { account.session(of: $0) != nil }) else { return }
        let resumed = logger.attempt("resuming a share whose account signed in", share: shareID) {
            try outbox.update(id: shareID, state: .sending, at: clock(), from: [.awaitingSignIn])
        }
        if let resumed {
            tell(.shareChanged(resumed))
            wakeRequested = true
        }
    }

    func reportProgress(_ shareID: String, _ position: Int, bytes: UInt64) {
        change(shareID, position, durable: false) { $0.bytesSent = max($0.bytesSent, bytes) }
    }

    @discardableResult
    func change(
        _ shareID: String, _ position: Int, durable: Bool = true,
        _ body: (inout Delivery) -> Void
    ) -> Delivery? {
        let delivery = logger.attempt("updating a delivery", share: shareID) {
            try outbox.updateDelivery(shareID: shareID, position: position, durable: durable, body)
        }
        if let share = logger.attempt("reading a share", share: shareID, { try outbox.share(id: shareID) }) {
            tell(.shareChanged(share))
        }
        return delivery
    }

    /// Whether the share is still being sent: a cancel in the meantime stops it. A state that
    /// cannot be read stops it too (logged); the share stays sending and the next pass goes on.
    func stillSending(_ shareID: String) -> Bool {
        logger.attempt("reading a share's state", share: shareID) { try outbox.state(of: shareID) } == .sending
    }

    /// Settles the share's own state from its deliveries once none is left in progress.
    private func finish(_ shareID: String) {
        guard let share = logger.attempt("reading a share", share: shareID, { try outbox.share(id: shareID) }),
            share.state == .sending
        else { return }
        let state = DeliveryOutcome.shareState(of: share.deliveries)
        guard state != .sending else { return }
        let failure = share.deliveries.first { $0.state == .failed }?.failure
        // Not settled, the share is still sending: the next pass finds every delivery final and settles it.
        guard
            let settled = logger.attempt(
                "settling a share", share: shareID,
                {
                    try outbox.update(id: shareID, state: state, failure: failure, at: clock(), from: [.sending])
                })
        else { return }
        tell(.shareChanged(settled))
        settle(settled)
    }

    /// What follows a share's final state: its copies go, and the service hears of it.
    private func settle(_ share: Share) {
        earlyUploads.abandon(shareID: share.id)
        // A failed share keeps its copies for Retry, unless every file is on the server already.
        let uploaded =
            share.state == .sent
            || logger.attempt("reading whether every file is uploaded", share: share.id) {
                try outbox.allFilesUploaded(shareID: share.id)
            } == true
        if uploaded { spool.remove(shareID: share.id) }
        logger.info("share \(share.state.rawValue)", metadata: ["id": "\(share.id)"])
        tell(.finished(share))
    }

    private func setOnline(_ value: Bool) {
        guard value != online else { return }
        online = value
        tell(.onlineChanged(value))
    }
}
