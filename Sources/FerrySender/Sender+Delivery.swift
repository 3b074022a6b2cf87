import FerryCore
import FerryMatrix
import FerryOutbox
import Foundation

/// One delivery, as a short list of named steps: resolve the room, decide its channel (the room
/// policy), check the server's limits, find what an earlier sign-in sent, then upload and send each
/// step that has no event yet. What follows the last event (settling the share) is `Sender.settle`.
extension Sender {
    /// One delivery on its way: what every step reads, and the room id still to be recorded with
    /// the first event.
    struct Run {
        let share: Share
        let position: Int
        let session: Session
        let homeserver: any Homeserver
        var delivery: Delivery
        var roomToRecord: String?

        var destination: String { delivery.destination }
        var shareID: String { share.id }
    }

    /// Sends the steps of one delivery that have no event yet; returns the share as the last event's
    /// record left it (that delivery sent, and the share too when it was the last), or nil when
    /// there was nothing left to send.
    func deliver(_ share: Share, position: Int, session: Session) async throws(DeliveryFailure) -> Share? {
        var run = Run(
            share: share, position: position, session: session, homeserver: connect(session),
            delivery: share.deliveries[position])
        if run.delivery.state != .sending { change(share.id, position) { $0.state = .sending } }
        let roomID = try await resolve(&run)
        let steps = try readSteps(of: run)
        let channel = try await asking(run) { () async throws(MatrixError) in
            try await self.channel(to: roomID, on: run.homeserver)
        }
        try await checkLimits(steps, of: run)
        var pending = steps.filter { $0.eventID == nil }
        if let done = try await recoverEarlierSignIn(&run, roomID: roomID, pending: &pending) { return done }
        let items = share.intent.items
        var bytesDone = steps.filter { $0.item != nil && $0.contentURI != nil }
            .reduce(UInt64(0)) { $0 + items[$1.item!].size }
        for (index, step) in pending.enumerated() {
            guard stillSending(share.id) else { throw .cancelled }
            let content = try await upload(step, of: run, through: channel, bytesDone: &bytesDone)
            if let recorded = try await send(
                content, step: step, last: index == pending.count - 1, of: &run,
                through: channel)
            {
                return recorded
            }
        }
        return nil
    }

    /// A failed request, sorted by what happens next for this delivery.
    func asking<T>(_ run: Run, _ body: () async throws(MatrixError) -> T) async throws(DeliveryFailure) -> T {
        do { return try await body() } catch {
            throw DeliveryFailure.from(error, destination: run.destination, token: run.session.accessToken)
        }
    }

    // MARK: - Resolve

    /// The room the destination names: kept from an earlier attempt, or looked up (a person's
    /// chat made, once).
    private func resolve(_ run: inout Run) async throws(DeliveryFailure) -> String {
        if let known = run.delivery.roomID { return known }
        let outbox = outbox
        let (shareID, position) = (run.shareID, run.position)
        // Unread, a chat begun before might be made a second time: the delivery stops here
        // (the share stays sending for the next pass) rather than guess.
        guard
            let begun = logger.attempt(
                "reading whether a room was being made", share: shareID,
                {
                    try outbox.roomCreationBegun(shareID: shareID, position: position)
                })
        else { throw .cancelled }
        let creation = DestinationResolver.Creation(
            marker: "\(shareID).\(position)",
            begun: begun,
            beginning: { () throws(MatrixError) in
                do { try outbox.beginRoomCreation(shareID: shareID, position: position) } catch {
                    throw MatrixError(
                        kind: .malformed,
                        // TRANSLATORS: a reason, completing "Sending to {room} failed: unexpected answer: {reason}.";
                        // {error} is the database's own words, in English.
                        message: tr("the outbox could not note the new chat: {error}", ["error": "\(error)"]))
                }
            })
        let homeserver = run.homeserver
        let destination = run.destination
        let roomID = try await asking(run) { () async throws(MatrixError) in
            try await DestinationResolver(rooms: homeserver).roomID(for: destination, creation: creation)
        }
        if Destination.kind(of: destination) == .userID {
            // The chat with a person may have just been created: it is committed before
            // anything is sent to it, or a restart would create a second one.
            run.delivery = change(shareID, position) { $0.roomID = roomID } ?? run.delivery
        } else {
            // A room id or an alias resolves to the same room again: kept with the first event.
            run.roomToRecord = roomID
        }
        return roomID
    }

    /// The delivery's steps. Unread, the delivery would look done (no step left) and be marked
    /// sent: it stops here instead, and the share stays sending for the next pass.
    private func readSteps(of run: Run) throws(DeliveryFailure) -> [DeliveryStep] {
        let outbox = outbox
        guard
            let steps = logger.attempt(
                "reading the delivery's steps", share: run.shareID,
                {
                    try outbox.steps(shareID: run.shareID, position: run.position)
                })
        else { throw .cancelled }
        return steps
    }

    // MARK: - Limits

    /// Every file still to upload against the server's limit, before the first event, so the
    /// room gets all of the share or none.
    private func checkLimits(_ steps: [DeliveryStep], of run: Run) async throws(DeliveryFailure) {
        let items = run.share.intent.items
        let toUpload = steps.filter { $0.item != nil && $0.contentURI == nil }
        guard !toUpload.isEmpty else { return }
        let (homeserver, url) = (run.homeserver, run.session.homeserver)
        guard
            let limit = try await asking(
                run, { () async throws(MatrixError) in try await serverUploadLimit(homeserver, at: url) })
        else { return }
        if let tooLarge = steps.compactMap(\.item).map({ items[$0] }).first(where: { $0.size > limit }) {
            throw .permanent(.fileTooLargeForServer(tooLarge.name, size: tooLarge.size, limit: limit))
        }
    }

    // MARK: - An earlier sign-in

    /// A delivery begun under an earlier sign-in: its device may be gone from the server, and its
    /// transaction ids with it. What went out then is found in the room and recorded, not sent
    /// again; returns the share when that was the whole delivery.
    private func recoverEarlierSignIn(
        _ run: inout Run, roomID: String,
        pending: inout [DeliveryStep]
    ) async throws(DeliveryFailure) -> Share? {
        guard run.delivery.signIn != run.session.signIn else { return nil }
        let delivery = run.delivery
        if delivery.signIn != nil || delivery.attempts > 0 || delivery.eventsSent > 0, !pending.isEmpty {
            let homeserver = run.homeserver
            let (transactionIDs, since) = (Set(pending.map(\.transactionID)), run.share.created - Self.clockSkew)
            let found = try await asking(run) { () async throws(MatrixError) in
                try await homeserver.sent(in: roomID, transactionIDs: transactionIDs, since: since)
            }
            // Events go out in order: what was found is the start of what is pending.
            while let step = pending.first, let eventID = found[step.transactionID] {
                pending.removeFirst()
                logger.info(
                    "found an event sent under an earlier sign-in",
                    metadata: ["share": "\(run.shareID)", "step": "\(step.step)"])
                let (roomToRecord, last) = (run.roomToRecord, pending.isEmpty)
                let recorded = logger.attempt("recording an event found in the room", share: run.shareID) {
                    try outbox.recordEvent(
                        step, eventID: eventID, roomID: roomToRecord, completesDelivery: last,
                        at: clock())
                }
                if let recorded {
                    run.roomToRecord = nil
                    tell(.shareChanged(recorded))
                    if last { return recorded }
                }
            }
        }
        run.delivery = change(run.shareID, run.position) { $0.signIn = run.session.signIn } ?? run.delivery
        return nil
    }

    // MARK: - Upload

    /// The step's content: its text, or its file, uploaded through the channel unless an upload
    /// that serves this room is already there (an earlier attempt, another room of the share, an
    /// upload begun while the file was staged).
    private func upload(
        _ step: DeliveryStep, of run: Run, through channel: any RoomChannel,
        bytesDone: inout UInt64
    ) async throws(DeliveryFailure) -> MessageContent {
        guard let index = step.item else {
            var content = MessageContent(msgtype: "m.text", body: step.text ?? "")
            content.transaction = step.transactionID
            return content
        }
        let shareID = run.shareID
        let item = run.share.intent.items[index]
        let path = spool.path(for: shareID, position: index)
        var step = step
        // An upload serves every room of the share that is of its kind: a plain one is no use to
        // an encrypted room, nor an encrypted one to a plain room. A room of the other kind uploads
        // its own, for itself alone.
        var ownUpload = false
        if let uri = step.contentURI, !channel.accepts(upload: uri) {
            step.contentURI = nil
            ownUpload = true
        }
        if step.contentURI == nil {
            let uri = try await uploadFile(
                item, at: path, index: index, of: run, through: channel, bytesDone: bytesDone)
            // Not recorded, the file is uploaded again at a retry: a second copy on the server,
            // never a second event.
            // An upload is on this account's server: it serves the deliveries of this account alone.
            let share = run.share
            let sameAccount =
                share.destinationAccounts.isEmpty
                ? nil : share.deliveries.indices.filter { share.account(at: $0) == share.account(at: run.position) }
            _ = logger.attempt("recording an upload", share: shareID) {
                try outbox.recordUpload(step, contentURI: uri, forEveryDelivery: !ownUpload, sharedWith: sameAccount)
            }
            step.contentURI = uri
            bytesDone += item.size
        }
        let preview = try await preview(item, position: index, of: run, through: channel)
        var content = Self.fileContent(item, url: step.contentURI!, path: path, preview: preview)
        // A caption is the body; the file's name stays in `filename` (Matrix 1.10).
        if let caption = step.text { content.body = caption }
        content.transaction = step.transactionID
        return content
    }

    /// The file's upload: the one begun while it was staged, or a new one from the staged copy.
    private func uploadFile(
        _ item: ShareItem, at path: String, index: Int, of run: Run, through channel: any RoomChannel,
        bytesDone base: UInt64
    ) async throws(DeliveryFailure) -> String {
        let (shareID, position) = (run.shareID, run.position)
        let throttle = ProgressThrottle { [weak self] sent in
            guard let self else { return }
            Task { await self.reportProgress(shareID, position, bytes: base + sent) }
        }
        if let early = await earlyUpload(
            shareID: shareID, position: index, as: run.session.userID, encrypted: channel.isEncrypted,
            progress: { throttle.update($0) })
        {
            return early
        }
        // The share may have been cancelled while its early upload was awaited.
        guard stillSending(shareID) else { throw .cancelled }
        // A copy that is gone or shorter fails this delivery, naming the file: not a network
        // error retried forever (nor a reason to say Ferry is offline).
        if let problem = StagedCopy.problem(path: path, size: item.size) {
            throw .permanent(.stagedCopyLost(item.name, reason: problem))
        }
        do {
            return try await asking(run) { () async throws(MatrixError) in
                try await channel.upload(
                    path: path, size: item.size, contentType: item.contentType, filename: item.name,
                    available: nil, progress: { throttle.update($0) })
            }
        } catch {
            // Cancel removes the copy while it is read: that is a cancel, not a lost file.
            guard stillSending(shareID) else { throw .cancelled }
            // The copy may have gone while it was read.
            if case .transient = error, let problem = StagedCopy.problem(path: path, size: item.size) {
                throw .permanent(.stagedCopyLost(item.name, reason: problem))
            }
            throw error
        }
    }

    // MARK: - Send

    /// Sends one step's event and records it; returns the share when it was the delivery's last.
    private func send(
        _ content: MessageContent, step: DeliveryStep, last: Bool, of run: inout Run,
        through channel: any RoomChannel
    ) async throws(DeliveryFailure) -> Share? {
        try await confirmStillPlain(channel, of: run)
        let (shareID, destination) = (run.shareID, run.destination)
        // The last moment a Cancel stops this event; from here until it is recorded, a Cancel
        // hears that it came too late for this destination (SendGate). A state that cannot be
        // read stops this event too (logged): the share stays sending for the next pass.
        let entered = logger.attempt("reading a share's state", share: shareID) {
            try gate.enter(shareID: shareID, destination: destination, outbox: outbox)
        }
        guard entered == true else { throw .cancelled }
        let eventID: String
        do {
            eventID = try await asking(run) { () async throws(MatrixError) in
                try await channel.send(content, transactionID: step.transactionID)
            }
        } catch {
            gate.leave(shareID: shareID, destination: destination)
            throw error
        }
        let roomToRecord = run.roomToRecord
        let recorded = logger.attempt("recording a sent event", share: shareID) {
            try outbox.recordEvent(step, eventID: eventID, roomID: roomToRecord, completesDelivery: last, at: clock())
        }
        gate.leave(shareID: shareID, destination: destination)
        guard let recorded else { return nil }
        run.roomToRecord = nil
        tell(.shareChanged(recorded))
        return last ? recorded : nil
    }

    /// A room that was plain when the delivery began may have been encrypted since (a long upload,
    /// a share of many files): asked again once the policy's answer is old, and then nothing more
    /// goes there in the clear.
    private func confirmStillPlain(_ channel: any RoomChannel, of run: Run) async throws(DeliveryFailure) {
        guard !channel.isEncrypted else { return }
        let homeserver = run.homeserver
        let roomID = channel.roomID
        if try await asking(run, { () async throws(MatrixError) in try await isEncrypted(roomID, on: homeserver) }) {
            throw .permanent(
                .encryptedRoom(
                    run.destination,
                    // TRANSLATORS: completes "{room} is end-to-end encrypted and Ferry could not encrypt for it:
                    // {reason}. Nothing was sent there unencrypted."
                    reason: tr("the room was end-to-end encrypted while the share was on its way; share it again")))
        }
    }

    // MARK: - Content

    /// How far the server's clock may be behind this machine's when looking back for events.
    static let clockSkew: Int64 = 300_000_000

    static func fileContent(
        _ item: ShareItem, url: String, path: String, preview: SentPreview? = nil
    ) -> MessageContent {
        var type = Composition.messageType(forContentType: item.contentType)
        var info = MessageContent.Info(mimetype: item.contentType, size: item.size)
        if type == "m.video" || type == "m.audio" {
            info.duration = preview?.duration
        }
        if type == "m.image" || type == "m.video", let facts = preview?.facts {
            (info.w, info.h, info.blurhash) = (facts.width, facts.height, facts.blurhash)
            if let uri = preview?.thumbnailURI, let thumbnail = facts.thumbnail {
                info.thumbnailURL = uri
                info.thumbnailInfo = .init(
                    w: thumbnail.width, h: thumbnail.height, mimetype: thumbnail.mimetype, size: thumbnail.size)
            }
        } else if type == "m.image", !ThumbnailRule.shownEverywhere.contains(item.contentType.lowercased()) {
            // A picture this system cannot read (HEIC without its loader) is not one every
            // client can show either: a file, which people can still open.
            type = "m.file"
        } else if type == "m.image", let size = ImageSize.of(Self.head(of: path)) {
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
}
