import FerryAccount
import FerryCore
import FerryCrypto
import FerryMatrix
import Foundation
import Logging

/// Emoji verification (`m.sas.v1`) of Ferry's device with another device of the same person,
/// over to-device messages: one at a time, in memory only (one cut short starts again).
///
/// Ferry asks every other device of the account (`m.key.verification.request`) and goes on with
/// the first that is ready; or starts straight away with a device the person named (older
/// clients, matrix-nio among them, know no request); and while it waits, a request or start
/// from another of the person's devices is taken instead. Messages from other users are ignored:
/// this is the person's own device being verified, and no stranger's message may end it.
///
/// Once both sides confirmed, it is the other device that signs Ferry's device with the
/// account's self-signing key (Element does, for its owner's devices); the verification ends by
/// asking the server whether it did.
public actor EmojiVerifier {
    /// Each account's encryption: a verification speaks as the account whose device it verifies.
    let encryptions: AccountEncryptions
    let logger: Logger
    /// Every change of a verification, in order: read by the service that owns the verifier.
    public nonisolated let changes: AsyncStream<EmojiVerificationState>
    private let changed: AsyncStream<EmojiVerificationState>.Continuation
    /// How long a verification may take in all before it is cancelled with `m.timeout`.
    let timeLimit: Duration

    private var open: Open?

    /// The running verification.
    private struct Open {
        let session: Session
        let us: SasParty
        /// The person's other devices whose keys checked out, by device id, and their names.
        let devices: [String: DeviceIdentity]
        let names: [String: String]
        /// The transaction of our request, and the devices it went to (empty: none sent).
        let requestID: String
        var asked: Set<String>
        var sas: SasVerification?
        var state: EmojiVerificationState
        let began: ContinuousClock.Instant
        /// Our listener for verification messages (VerificationInbox).
        let listener: Int
        /// What to tell the person when Ferry ended it for a reason of its own (not their cancel).
        var ending: String?
    }

    /// A `begin` is between its first await and keeping `open`: another waits its turn out.
    private var beginning = false

    /// A verifier; `changes` tells of every change.
    public init(encryptions: AccountEncryptions, logger: Logger, timeLimit: Duration = .seconds(600)) {
        self.encryptions = encryptions
        self.logger = logger
        self.timeLimit = timeLimit
        (changes, changed) = AsyncStream.makeStream(of: EmojiVerificationState.self)
    }

    private func encryption(_ session: Session) -> Encryption { encryptions.of(session.userID) }

    private func publish(_ state: EmojiVerificationState) {
        changed.yield(state)
    }

    /// The verification running or last ended, if any.
    public var current: EmojiVerificationState? { open?.state }

    /// Begins: asks `deviceID` (a start, which every client answers), or with nil every other
    /// device of the account (a request, which current clients show as a prompt).
    public func begin(session: Session, deviceID: String?) async throws(VerificationFailure) -> EmojiVerificationState {
        if beginning { throw .busy }
        if let open, !open.state.isOver { throw .busy }
        beginning = true
        defer { beginning = false }
        let (ours, api, _) = try await encryption(session).ownKeys(session)
        let answer: JSONValue
        do { answer = try await api.queryAnswer(users: [session.userID]) } catch { throw .server(error) }
        var devices: [String: DeviceIdentity] = [:], names: [String: String] = [:]
        for (id, keys) in (answer["device_keys"]?[session.userID]?.objectValue ?? [:]).prefix(200)
        where id != session.deviceID {
            guard let device = try? DeviceIdentity(verifying: keys, userID: session.userID, deviceID: id) else {
                continue
            }
            devices[id] = device
            names[id] = String(
                String.UnicodeScalarView(
                    (keys["unsigned"]?["device_display_name"]?.stringValue ?? "").unicodeScalars.prefix(64)))
        }
        if let deviceID, devices[deviceID] == nil { throw .unknownDevice }
        guard !devices.isEmpty else { throw .noOtherDevice }

        let id = SasVerification.newTransactionID()
        let us = SasParty(userID: session.userID, deviceID: session.deviceID, ed25519: ours.ed25519)
        let listener = await encryption(session).listenForVerification(userID: session.userID)
        var started = Open(
            session: session, us: us, devices: devices, names: names, requestID: id, asked: [], sas: nil,
            state: EmojiVerificationState(id: id, stage: .waiting, userID: session.userID), began: .now,
            listener: listener)
        do {
            // What waits on the server from before (a start from an attempt cut short, a backlog
            // after a restart) is not part of this verification: read and dropped first.
            _ = try await encryption(session).verificationMessages(session: session, wait: 0, token: listener)
            if let deviceID, let device = devices[deviceID] {
                let (sas, start) = SasVerification.start(transactionID: id, us: us, them: SasParty(device))
                try await send([start], to: [deviceID], session: session)
                started.sas = sas
                started.state.deviceID = deviceID
                started.state.deviceName = names[deviceID] ?? ""
            } else {
                let request = VerificationRequest.request(transactionID: id, fromDevice: session.deviceID, now: Date())
                try await send([request], to: Array(devices.keys), session: session)
                started.asked = Set(devices.keys)
            }
        } catch {
            await encryption(session).stopListening(listener)
            throw Encryption.failure(error)
        }
        open = started
        logger.info(
            "emoji verification asked", metadata: ["devices": "\(started.asked.isEmpty ? 1 : started.asked.count)"])
        publish(started.state)
        Task { await self.listen(id: id) }
        return started.state
    }

    /// The person compared the emoji: `match` sends our MAC, otherwise a cancel.
    public func answer(id: String, match: Bool) async throws(VerificationFailure) -> EmojiVerificationState {
        guard var open, open.state.id == id else { throw .noSuchVerification }
        // Ended meanwhile (the other side cancelled while the person looked): how it ended.
        if open.state.isOver { return open.state }
        guard var sas = open.sas, sas.phase == .comparing else { throw .notComparing }
        let messages =
            match ? sas.confirm() : [sas.cancel(.mismatchedSas, reason: "the emoji do not match")].compactMap { $0 }
        open.sas = sas
        self.open = open
        await deliver(messages, session: open.session, device: sas.them.deviceID)
        await update()
        return self.open?.state ?? open.state
    }

    /// Ends it from our side (`m.user`).
    public func cancel(id: String) async throws(VerificationFailure) -> EmojiVerificationState {
        guard let open, open.state.id == id else { throw .noSuchVerification }
        if !open.state.isOver { await end(.user, reason: "cancelled by the person", saying: nil) }
        return self.open?.state ?? open.state
    }

    // MARK: - Listening

    /// Reads the other side's messages until the verification is over, and ends it when it took
    /// longer than `timeLimit`.
    private func listen(id: String) async {
        var failures = 0
        while let open, open.state.id == id, !open.state.isOver {
            if ContinuousClock.now - open.began > timeLimit {
                await end(.timeout, reason: "nobody answered in time", saying: nil)
                break
            }
            do {
                let messages = try await encryption(open.session).verificationMessages(
                    session: open.session, wait: 5_000, token: open.listener)
                failures = 0
                for message in messages { await take(message) }
            } catch {
                failures += 1
                if error.matrixError.isUnknownToken || failures > 30 {
                    // The reason goes to the other device as the spec's text; the person reads `saying`.
                    await end(
                        .user, reason: "Ferry lost the connection to the homeserver",
                        saying: tr("Ferry lost the connection to the homeserver; nothing was verified."))
                    break
                }
                try? await Task.sleep(for: .seconds(2))
            }
        }
        if let open { await encryption(open.session).stopListening(open.listener) }
    }

    /// One message: to the SAS it belongs to, or, while waiting, an answer to our request or an
    /// offer of the person's other device.
    private func take(_ message: ToDeviceEvent) async {
        guard var open, !open.state.isOver, message.sender.utf8.elementsEqual(open.session.userID.utf8),
            let transaction = VerificationMessage.transactionID(of: message.content)
        else { return }
        if var sas = open.sas {
            guard transaction == sas.transactionID else { return }
            let device = sas.them.deviceID
            var messages: [VerificationMessage]
            do {
                messages = try sas.receive(type: message.type, content: message.content, sender: message.sender)
            } catch {
                messages = [error.message(transactionID: transaction)]
            }
            open.sas = sas
            self.open = open
            await deliver(messages, session: open.session, device: device)
            await update()
            return
        }
        let wait = VerificationWait(us: open.us, devices: open.devices, requestID: open.requestID, asked: open.asked)
        switch wait.step(for: message) {
        case .ignore: return
        case .declined(let cancel, let others):
            // The other devices asked are told, as their prompts would stay otherwise.
            await finish(cancelled: cancel.sentence(byUs: false))
            let declined = VerificationCancel(.user, "declined on another device").message(transactionID: transaction)
            try? await send([declined], to: Array(others), session: open.session)
        case .refuse(let refusal, let device): await deliver([refusal], session: open.session, device: device)
        case .go(let sas, let device, let messages): await go(with: sas, device: device, sending: messages)
        }
    }

    /// The verification goes on with `device`: the others asked are told another device answered.
    private func go(with sas: SasVerification, device: String, sending messages: [VerificationMessage]) async {
        guard var open, !open.state.isOver else { return }
        // Every device asked hears that another answered, and the chosen one too when it came
        // with a request or start of its own (our request's prompt would stay there otherwise).
        let others = sas.transactionID == open.requestID ? open.asked.subtracting([device]) : open.asked
        open.sas = sas
        open.asked = []
        open.state.deviceID = device
        open.state.deviceName = open.names[device] ?? ""
        self.open = open
        await deliver(messages, session: open.session, device: device)
        if !others.isEmpty {
            let accepted = VerificationCancel(.accepted, "another device answered").message(
                transactionID: open.requestID)
            try? await send([accepted], to: Array(others), session: open.session)
        }
        await update()
    }

    // MARK: - Ending

    /// Ends it from our side with `code`: the other device (or every device asked) is told.
    /// `saying`: what the person hears when it is not what the code says (a lost connection).
    /// The state is ended before the first await, so that nothing arriving meanwhile revives it.
    private func end(_ code: VerificationCancel.Code, reason: String, saying: String?) async {
        guard var open, !open.state.isOver else { return }
        let cancel = VerificationCancel(code, reason)
        if var sas = open.sas {
            let message = sas.cancel(code, reason: reason)
            open.sas = sas
            open.ending = saying
            self.open = open
            await update()
            await deliver([message].compactMap { $0 }, session: open.session, device: sas.them.deviceID)
        } else {
            let asked = open.asked
            await finish(cancelled: saying ?? cancel.sentence(byUs: true))
            try? await send([cancel.message(transactionID: open.requestID)], to: Array(asked), session: open.session)
        }
    }

    private func finish(cancelled reason: String) async {
        guard var open, !open.state.isOver else { return }
        open.state.stage = .cancelled
        open.state.reason = reason
        self.open = open
        logger.info("emoji verification ended", metadata: ["stage": "cancelled"])
        publish(open.state)
        await encryption(open.session).stopListening(open.listener)
    }

    /// The state from the SAS's phase, published when it changed; once done, the server is asked
    /// whether the other device signed Ferry's (it uploads the signature after its own `done`).
    private func update() async {
        guard var open, let sas = open.sas, !open.state.isOver else { return }
        var state = open.state
        switch sas.phase {
        case .awaitingAccept, .awaitingKey: state.stage = .waiting
        case .comparing: state.stage = .comparing
        case .awaitingMac: state.stage = .confirmed
        case .done: state.stage = .done
        case .cancelledByUs(let cancel):
            state.stage = .cancelled
            state.reason = open.ending ?? cancel.sentence(byUs: true)
        case .cancelledByThem(let cancel):
            state.stage = .cancelled
            state.reason = cancel.sentence(byUs: false)
        }
        if let string = sas.shortAuthenticationString, state.emoji.isEmpty {
            state.emoji = string.emoji
            state.decimals = string.decimals
        }
        guard state != open.state else { return }
        open.state = state
        self.open = open
        if state.isOver {
            logger.info(
                "emoji verification ended",
                metadata: [
                    "stage": "\(state.stage.rawValue)",
                    "mac": "\(sas.macMethod?.rawValue ?? "")",
                ])
            await encryption(open.session).stopListening(open.listener)
        }
        publish(state)
        if state.stage == .done {
            Task { await self.learnSignature(id: state.id, session: open.session) }
        }
    }

    /// Asks the server whether Ferry's device is verified now, for up to fifteen seconds, and
    /// says so: the other device signs after both sides confirmed, which may be a while after
    /// our side is done (it waits for its own person, then uploads).
    private func learnSignature(id: String, session: Session) async {
        do { try await encryption(session).forgetTrustedMaster(of: session) } catch {
            logger.notice(
                "forgetting the trusted master key failed", metadata: ["error": "\(error.matrixError.message)"])
        }
        var last: DeviceVerification?
        for attempt in 0..<30 {
            if attempt > 0 { try? await Task.sleep(for: .milliseconds(500)) }
            last = (try? await encryption(session).verification(of: session)) ?? last
            if last == .verified { break }
        }
        // Always said, so that nobody waits for it: a server that did not answer at all leaves
        // the device as unverified as far as Ferry can tell.
        guard var open, open.state.id == id else { return }
        open.state.verification = last ?? .unverified
        self.open = open
        publish(open.state)
    }

    // MARK: - Sending

    /// Sends `messages` in order to one device of the person; a failure ends the verification
    /// (the other side would wait for a message that never comes).
    private func deliver(_ messages: [VerificationMessage], session: Session, device: String) async {
        guard !messages.isEmpty else { return }
        do {
            try await send(messages, to: [device], session: session)
        } catch {
            if var open, var sas = open.sas, !open.state.isOver {
                _ = sas.cancel(.user, reason: "Ferry could not reach the homeserver")
                open.sas = sas
                open.ending = tr("Ferry could not reach the homeserver; nothing was verified.")
                self.open = open
                await update()
            }
        }
    }

    private func send(
        _ messages: [VerificationMessage], to devices: [String], session: Session
    ) async throws(MatrixError) {
        let api = DeviceKeysAPI(http: encryption(session).http(session))
        for message in messages where !devices.isEmpty {
            let content = Dictionary(uniqueKeysWithValues: devices.map { ($0, message.content) })
            try await api.sendToDevice(
                type: message.type, transactionID: SasVerification.newTransactionID(),
                messages: [session.userID: content])
        }
    }
}
