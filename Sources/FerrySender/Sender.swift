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
    let logger: Logger
    let clock: @Sendable () -> Int64
    let events: SenderEvents
    private var wakeRequested = false
    private var retryEverythingNow = false
    private var waiter: CheckedContinuation<Void, Never>?
    private var online = true
    /// Rooms known not to be encrypted, until when: encryption can be switched on at any time, so a
    /// "no" is only trusted for a minute (and asked again before each event after that); a "yes"
    /// is for good (`encryptedRooms`), whatever a server says later: encryption cannot be
    /// switched off, and a server that claims so is not believed.
    private var unencryptedUntil: [String: Int64] = [:]
    private var encryptedRooms: Set<String> = []
    private var uploadLimit: (bytes: UInt64?, until: Int64)?
    /// Uploads begun while their files were being staged (Sender+UploadAhead).
    let earlyUploads = EarlyUploads()
    /// Makes Cancel and the last check before an event request one step each (SendGate).
    let gate = SendGate()

    public init(outbox: Outbox, spool: Spool, account: any SessionSource, backoff: Backoff, events: SenderEvents,
                logger: Logger, clock: @escaping @Sendable () -> Int64,
                connect: @escaping @Sendable (Session) -> any Homeserver = { MatrixClient(session: $0) }) {
        self.outbox = outbox
        self.spool = spool
        self.account = account
        self.connect = connect
        self.backoff = backoff
        self.events = events
        self.logger = logger
        self.clock = clock
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

    /// One pass over the queue; returns when the next delivery waiting for its backoff is due.
    private func drain() async -> Int64? {
        let retryNow = retryEverythingNow
        retryEverythingNow = false
        var nextRetry: Int64?
        // At a start, the stored sign-in's token is read in the background (Account).
        await account.tokenRead()
        while let session = account.current {
            // A share is never sent as someone else (the service parks them at a sign-in; this
            // holds whatever reached the queue since).
            let parked = logger.attempt("parking the shares of others") {
                try outbox.park(sharesNotOf: session.userID, at: clock())
            }
            for id in parked ?? [] {
                if let share = logger.attempt("reading a parked share", share: id, { try outbox.share(id: id) }) {
                    events.shareChanged(share)
                }
            }
            // A queue that cannot be read is tried again at the next wake-up (a new share, the network, a retry time).
            let queued = logger.attempt("reading the queue") { try outbox.shares(in: [.queued, .sending]) } ?? []
            let queue = queued.filter { $0.account ?? session.userID == session.userID }
            let shares = takeUp(queue, as: session)
            var progressed = false
            nextRetry = nil
            for share in shares {
                guard account.current == session else { break }
                switch await send(share, session: session, retryNow: retryNow) {
                case .signedOut: return nil
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
    private func takeUp(_ shares: [Share], as session: Session) -> [Share] {
        let fresh = shares.filter { $0.state == .queued || $0.deliveries.isEmpty }
        guard !fresh.isEmpty else { return shares }
        let takeovers = fresh.map { share in
            Outbox.Takeover(id: share.id, steps: Composition.steps(for: share.intent),
                            bytesTotal: share.intent.items.filter { $0.kind == .file }.reduce(0) { $0 + $1.size })
        }
        // Not taken up here, each share is taken up on its own in send(_:session:retryNow:).
        guard let begun = logger.attempt("taking up the queue", {
            try outbox.beginSending(takeovers, as: session.userID, signIn: session.signIn, at: clock())
        }) else {
            return shares
        }
        begun.forEach(events.shareChanged)
        let byID = Dictionary(uniqueKeysWithValues: begun.map { ($0.id, $0) })
        return shares.map { byID[$0.id] ?? $0 }
    }

    private func send(_ original: Share, session: Session, retryNow: Bool) async -> Outcome {
        events.working(original.id)
        defer { events.working(nil) }
        var share = original
        if share.state == .queued || share.deliveries.isEmpty {
            let steps = Composition.steps(for: share.intent)
            let bytes = share.intent.items.filter { $0.kind == .file }.reduce(0) { $0 + $1.size }
            // A share that cannot be taken up stays queued for the next pass (nil: cancelled meanwhile).
            guard let begun = logger.attempt("taking up a share", share: share.id, {
                try outbox.beginSending(id: share.id, steps: steps, bytesTotal: bytes, as: session.userID,
                                        signIn: session.signIn, at: clock())
            }) else {
                return .finished
            }
            share = begun
            events.shareChanged(share)
        }
        var nextRetry: Int64?
        for (position, delivery) in share.deliveries.enumerated() where !delivery.state.isFinal {
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
                    guard account.current?.accessToken == token else {
                        // The token of a sign-in that a newer one replaced, and ended at the
                        // server: nobody is signed out. The share waits for its own person (the
                        // sign-in parked it) or goes on under the new sign-in in the next pass.
                        return .finished
                    }
                    account.invalidate(token: token)
                    earlyUploads.abandon(shareID: nil)
                    // Not moved, they are moved at the next sign-in's start (the service parks and resumes).
                    _ = logger.attempt("moving the queue to awaiting-sign-in") {
                        try outbox.move(from: [.queued, .sending], to: .awaitingSignIn, at: clock())
                    }
                    events.signedOut()
                    return .signedOut
                case .transient(let error):
                    let attempts = delivery.attempts + 1
                    let retryAt = clock() + backoff.delay(attempt: attempts,
                                                          retryAfterMilliseconds: error.retryAfterMilliseconds,
                                                          jitter: Double.random(in: 0..<1))
                    logger.notice("will retry", metadata: ["share": "\(share.id)", "destination": "\(delivery.destination)",
                                                           "error": "\(error)", "attempt": "\(attempts)"])
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
        return nextRetry.map { .waiting(until: $0) } ?? .finished
    }

    /// Sends the steps of one delivery that have no event yet; returns the share as the last event's
    /// record left it (that delivery sent, and the share too when it was the last), or nil when
    /// there was nothing left to send.
    private func deliver(_ share: Share, position: Int, session: Session) async throws(DeliveryFailure) -> Share? {
        let homeserver = connect(session)
        var delivery = share.deliveries[position]
        let destination = delivery.destination
        func attempt<T>(_ body: () async throws(MatrixError) -> T) async throws(DeliveryFailure) -> T {
            do { return try await body() } catch {
                throw DeliveryFailure.from(error, destination: destination, token: session.accessToken)
            }
        }
        if delivery.state != .sending { change(share.id, position) { $0.state = .sending } }
        let roomID: String
        var roomToRecord: String?
        if let known = delivery.roomID {
            roomID = known
        } else {
            let outbox = outbox
            // Unread, a chat begun before might be made a second time: the delivery stops here
            // (the share stays sending for the next pass) rather than guess.
            guard let begun = logger.attempt("reading whether a room was being made", share: share.id, {
                try outbox.roomCreationBegun(shareID: share.id, position: position)
            }) else { throw .cancelled }
            let creation = DestinationResolver.Creation(
                marker: "\(share.id).\(position)",
                begun: begun,
                beginning: { () throws(MatrixError) in
                    do { try outbox.beginRoomCreation(shareID: share.id, position: position) } catch {
                        // TRANSLATORS: a reason, completing "Sending to {room} failed: unexpected answer: {reason}."; {error} is the database's own words, in English.
                        throw MatrixError(kind: .malformed, message: tr("the outbox could not note the new chat: {error}", ["error": "\(error)"]))
                    }
                })
            roomID = try await attempt { () async throws(MatrixError) in
                try await DestinationResolver(rooms: homeserver).roomID(for: destination, creation: creation)
            }
            if Destination.kind(of: destination) == .userID {
                // The chat with a person may have just been created: it is committed before
                // anything is sent to it, or a restart would create a second one.
                delivery = change(share.id, position) { $0.roomID = roomID } ?? delivery
            } else {
                // A room id or an alias resolves to the same room again: kept with the first event.
                roomToRecord = roomID
            }
        }
        // Unread, the delivery would look done (no step left) and be marked sent: it stops here
        // instead, and the share stays sending for the next pass.
        guard let steps = logger.attempt("reading the delivery's steps", share: share.id, {
            try outbox.steps(shareID: share.id, position: position)
        }) else { throw .cancelled }
        // Never plain text into an encrypted room, checked before anything is sent
        // (docs/ARCHITECTURE.md, "Rules that hold everywhere"): its events go out encrypted,
        // or, where this homeserver cannot encrypt, not at all.
        let encrypted = try await attempt { () async throws(MatrixError) in try await isEncrypted(roomID, on: homeserver) }
        if encrypted {
            guard homeserver.encrypts else {
                // TRANSLATORS: completes "{room} is end-to-end encrypted and Ferry could not encrypt for it: {reason}. Nothing was sent there unencrypted."
                throw .permanent(.encryptedRoom(destination, reason: tr("this sender cannot encrypt")))
            }
        }
        let items = share.intent.items
        let files = steps.compactMap(\.item).map { items[$0] }
        if !files.isEmpty, steps.contains(where: { $0.item != nil && $0.contentURI == nil }),
           let limit = try await attempt({ () async throws(MatrixError) in try await serverUploadLimit(homeserver) }),
           let tooLarge = files.first(where: { $0.size > limit }) {
            // Checked for every file before the first event, so the room gets all of the share or none.
            throw .permanent(.fileTooLargeForServer(tooLarge.name, size: tooLarge.size, limit: limit))
        }
        var bytesDone = steps.filter { $0.item != nil && $0.contentURI != nil }.reduce(UInt64(0)) { $0 + items[$1.item!].size }
        var pending = steps.filter { $0.eventID == nil }
        if delivery.signIn != session.signIn {
            // Begun under an earlier sign-in: its device may be gone from the server, and its
            // transaction ids with it. What went out then is found in the room, not sent again.
            if delivery.signIn != nil || delivery.attempts > 0 || delivery.eventsSent > 0, !pending.isEmpty {
                let found = try await attempt { () async throws(MatrixError) in
                    try await homeserver.sent(in: roomID, transactionIDs: Set(pending.map(\.transactionID)),
                                              since: share.created - Self.clockSkew)
                }
                // Events go out in order: what was found is the start of what is pending.
                while let step = pending.first, let eventID = found[step.transactionID] {
                    pending.removeFirst()
                    logger.info("found an event sent under an earlier sign-in", metadata: ["share": "\(share.id)", "step": "\(step.step)"])
                    let recorded = logger.attempt("recording an event found in the room", share: share.id) {
                        try outbox.recordEvent(step, eventID: eventID, roomID: roomToRecord,
                                               completesDelivery: pending.isEmpty, at: clock())
                    }
                    if let recorded {
                        roomToRecord = nil
                        events.shareChanged(recorded)
                        if pending.isEmpty { return recorded }
                    }
                }
            }
            delivery = change(share.id, position) { $0.signIn = session.signIn } ?? delivery
        }
        for (index, var step) in pending.enumerated() {
            guard stillSending(share.id) else { throw .cancelled }
            var content: MessageContent
            if let index = step.item {
                let item = items[index]
                let path = spool.path(for: share.id, position: index)
                // An upload serves every room of the share that is of its kind: a plain one is no
                // use to an encrypted room, nor an encrypted one to a plain room. A room of the
                // other kind uploads its own, for itself alone.
                var ownUpload = false
                if let uri = step.contentURI, homeserver.isEncryptedUpload(uri) != encrypted {
                    step.contentURI = nil
                    ownUpload = true
                }
                if step.contentURI == nil {
                    let base = bytesDone
                    let throttle = ProgressThrottle { [weak self] sent in
                        guard let self else { return }
                        Task { await self.reportProgress(share.id, position, bytes: base + sent) }
                    }
                    let uri: String
                    if let early = await earlyUpload(shareID: share.id, position: index, encrypted: encrypted,
                                                     progress: { throttle.update($0) }) {
                        uri = early
                    } else {
                        // The share may have been cancelled while its early upload was awaited.
                        guard stillSending(share.id) else { throw .cancelled }
                        // A copy that is gone or shorter fails this delivery, naming the file: not a
                        // network error retried forever (nor a reason to say Ferry is offline).
                        if let problem = StagedCopy.problem(path: path, size: item.size) {
                            throw .permanent(.stagedCopyLost(item.name, reason: problem))
                        }
                        do {
                            uri = try await attempt { () async throws(MatrixError) in
                                encrypted
                                    ? try await homeserver.uploadEncrypted(path: path, size: item.size, available: nil,
                                                                           progress: { throttle.update($0) })
                                    : try await homeserver.upload(path: path, size: item.size, contentType: item.contentType,
                                                                  filename: item.name, available: nil, progress: { throttle.update($0) })
                            }
                        } catch {
                            // Cancel removes the copy while it is read: that is a cancel, not a lost file.
                            guard stillSending(share.id) else { throw .cancelled }
                            // The copy may have gone while it was read.
                            if case .transient = error, let problem = StagedCopy.problem(path: path, size: item.size) {
                                throw .permanent(.stagedCopyLost(item.name, reason: problem))
                            }
                            throw error
                        }
                    }
                    // Not recorded, the file is uploaded again at a retry: a second copy on the
                    // server, never a second event.
                    _ = logger.attempt("recording an upload", share: share.id) {
                        try outbox.recordUpload(step, contentURI: uri, forEveryDelivery: !ownUpload)
                    }
                    step.contentURI = uri
                    bytesDone += item.size
                }
                content = Self.fileContent(item, url: step.contentURI!, path: path)
            } else {
                content = MessageContent(msgtype: "m.text", body: step.text ?? "")
            }
            content.transaction = step.transactionID
            // A room that was plain when the delivery began may have been encrypted since (a long
            // upload, a share of many files): asked again once the minute's answer is old, and
            // then nothing more goes there in the clear.
            if !encrypted, try await attempt({ () async throws(MatrixError) in try await isEncrypted(roomID, on: homeserver) }) {
                // TRANSLATORS: completes "{room} is end-to-end encrypted and Ferry could not encrypt for it: {reason}. Nothing was sent there unencrypted."
                throw .permanent(.encryptedRoom(destination, reason: tr("the room was end-to-end encrypted while the share was on its way; share it again")))
            }
            // The last moment a Cancel stops this event; from here until it is recorded, a Cancel
            // hears that it came too late for this destination (SendGate).
            // A state that cannot be read stops this event too (logged): the share stays sending for the next pass.
            let entered = logger.attempt("reading a share's state", share: share.id) {
                try gate.enter(shareID: share.id, destination: destination, outbox: outbox)
            }
            guard entered == true else { throw .cancelled }
            let eventID: String
            do {
                eventID = try await attempt { () async throws(MatrixError) in
                    try await homeserver.send(content, to: roomID, transactionID: step.transactionID, encrypted: encrypted)
                }
            } catch {
                gate.leave(shareID: share.id, destination: destination)
                throw error
            }
            let last = index == pending.count - 1
            let recorded = logger.attempt("recording a sent event", share: share.id) {
                try outbox.recordEvent(step, eventID: eventID, roomID: roomToRecord, completesDelivery: last,
                                       at: clock())
            }
            gate.leave(shareID: share.id, destination: destination)
            if let updated = recorded {
                roomToRecord = nil
                events.shareChanged(updated)
                if last { return updated }
            }
        }
        return nil
    }

    /// How far the server's clock may be behind this machine's when looking back for events.
    static let clockSkew: Int64 = 300_000_000

    static func fileContent(_ item: ShareItem, url: String, path: String) -> MessageContent {
        let type = Composition.messageType(forContentType: item.contentType)
        var info = MessageContent.Info(mimetype: item.contentType, size: item.size)
        if type == "m.image", let size = ImageSize.of(Self.head(of: path)) {
            info.w = size.width
            info.h = size.height
        }
        return MessageContent(msgtype: type, body: item.name, url: url, filename: item.name, info: info)
    }

    /// The first bytes of a file: enough for any image header Ferry reads (JPEG's frame header can
    /// sit behind large metadata).
    static func head(of path: String, bytes count: Int = 256 << 10) -> [UInt8] {
        guard let handle = FileHandle(forReadingAtPath: path) else { return [] }
        defer { try? handle.close() }
        return [UInt8]((try? handle.read(upToCount: count)) ?? Data())
    }

    func isEncrypted(_ roomID: String, on homeserver: any Homeserver) async throws(MatrixError) -> Bool {
        if encryptedRooms.contains(roomID) { return true }
        if let until = unencryptedUntil[roomID], until > clock() { return false }
        let encrypted = try await homeserver.isEncrypted(roomID)
        if encrypted {
            encryptedRooms.insert(roomID)
            unencryptedUntil[roomID] = nil
        } else {
            unencryptedUntil[roomID] = clock() + 60_000_000
        }
        return encrypted
    }

    func serverUploadLimit(_ homeserver: any Homeserver) async throws(MatrixError) -> UInt64? {
        if let uploadLimit, uploadLimit.until > clock() { return uploadLimit.bytes }
        let bytes = try await homeserver.uploadLimit()
        uploadLimit = (bytes, clock() + 600_000_000)
        return bytes
    }

    private func reportProgress(_ shareID: String, _ position: Int, bytes: UInt64) {
        change(shareID, position, durable: false) { $0.bytesSent = max($0.bytesSent, bytes) }
    }

    @discardableResult
    private func change(_ shareID: String, _ position: Int, durable: Bool = true,
                        _ body: (inout Delivery) -> Void) -> Delivery? {
        let delivery = logger.attempt("updating a delivery", share: shareID) {
            try outbox.updateDelivery(shareID: shareID, position: position, durable: durable, body)
        }
        if let share = logger.attempt("reading a share", share: shareID, { try outbox.share(id: shareID) }) {
            events.shareChanged(share)
        }
        return delivery
    }

    /// Whether the share is still being sent: a cancel in the meantime stops it. A state that
    /// cannot be read stops it too (logged); the share stays sending and the next pass goes on.
    private func stillSending(_ shareID: String) -> Bool {
        logger.attempt("reading a share's state", share: shareID) { try outbox.state(of: shareID) } == .sending
    }

    /// Settles the share's own state from its deliveries once none is left in progress.
    private func finish(_ shareID: String) {
        guard let share = logger.attempt("reading a share", share: shareID, { try outbox.share(id: shareID) }),
              share.state == .sending else { return }
        let state = DeliveryOutcome.shareState(of: share.deliveries)
        guard state != .sending else { return }
        let failure = share.deliveries.first { $0.state == .failed }?.failure
        // Not settled, the share is still sending: the next pass finds every delivery final and settles it.
        guard let settled = logger.attempt("settling a share", share: shareID, {
            try outbox.update(id: shareID, state: state, failure: failure, at: clock(), from: [.sending])
        }) else { return }
        events.shareChanged(settled)
        settle(settled)
    }

    /// What follows a share's final state: its copies go, and the service hears of it.
    private func settle(_ share: Share) {
        earlyUploads.abandon(shareID: share.id)
        // A failed share keeps its copies for Retry, unless every file is on the server already.
        let uploaded = share.state == .sent
            || logger.attempt("reading whether every file is uploaded", share: share.id) {
                try outbox.allFilesUploaded(shareID: share.id)
            } == true
        if uploaded { spool.remove(shareID: share.id) }
        logger.info("share \(share.state.rawValue)", metadata: ["id": "\(share.id)"])
        events.finished(share)
    }

    private func setOnline(_ value: Bool) {
        guard value != online else { return }
        online = value
        events.onlineChanged(value)
    }
}
