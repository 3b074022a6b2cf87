import FerryCore
import FerryCrypto
import FerryMatrix

/// What other devices send to Ferry's device, taken from the syncs Ferry makes anyway (before each
/// encrypted event, and while an emoji verification listens):
///
/// - **Olm messages** (`m.room.encrypted`) are decrypted with the device's kept session, or a new
///   one their pre-key message starts (the sender lost the old one and made another: Ferry's next
///   room keys go over it). A verification message that came encrypted goes to the verification
///   inbox; `m.dummy` only brings the session.
/// - **A message that does not decrypt** means the sender's session with Ferry is wedged: Ferry
///   starts a new one and sends `m.dummy` over it, at most once an hour for each device, as the
///   spec asks.
/// - **Room-key requests** (`m.room_key_request`) from the person's own devices that they verified
///   under the master key Ferry trusts get the room's current session by `m.forwarded_room_key`;
///   anyone else's are never answered.
///
/// None of it may fail what Ferry is sending: each message's trouble is logged and it is dropped
/// (the server has already handed it over).
extension Encryption {
    /// Messages held at most between two reads: a sender flooding Ferry's device gets no more.
    static let inboxLimit = 200
    /// How often a device gets a new session and `m.dummy` from Ferry (µs): an hour.
    static let unwedgeInterval: Int64 = 3_600_000_000

    /// Keeps the messages of a sync this inbox handles (the rest are verification's, or nobody's).
    func keepInbox(_ events: [ToDeviceEvent]) {
        let wanted = events.filter { $0.type == "m.room.encrypted" || $0.type == "m.room_key_request" }
        inbox += wanted.prefix(max(0, Self.inboxLimit - inbox.count))
    }

    /// Handles what the inbox holds, in the order it came.
    func handleInbox(session: Session, http: MatrixHTTP) async {
        guard !inbox.isEmpty else { return }
        let messages = inbox
        inbox = []
        for message in messages {
            do {
                if message.type == "m.room.encrypted" {
                    try await receiveOlm(message, session: session, http: http)
                } else {
                    try await answerKeyRequest(message.content, from: message.sender, session: session, http: http)
                }
            } catch {
                logger.error(
                    "a message to this device could not be handled",
                    metadata: ["type": "\(message.type)", "error": "\(error)"])
            }
        }
    }

    // MARK: - Olm

    private func receiveOlm(
        _ message: ToDeviceEvent, session: Session, http: MatrixHTTP
    ) async throws(EncryptionFailure) {
        var (store, record) = try await ready(session)
        var account = try Self.account(record)
        let envelope: IncomingOlm.Envelope
        do { envelope = try IncomingOlm.envelope(message.content, ourCurve25519: account.curve25519) } catch {
            logger.notice("an encrypted to-device message not for this device", metadata: ["why": "\(error)"])
            return
        }
        let name = "olm:\(envelope.senderKey)"
        var decrypted: (session: OlmSession, plaintext: [UInt8], newSession: Bool)?
        if let state = try store.load(name, as: OlmSession.State.self), var kept = try? OlmSession(state: state),
            let plaintext = try? kept.decrypt(type: envelope.type, body: envelope.body)
        {
            decrypted = (kept, plaintext, false)
        } else if envelope.type == 0 {
            var updated = account
            if let (new, plaintext) = try? OlmSession.inbound(
                to: &updated, theirIdentityKey: envelope.senderKey, preKeyMessage: envelope.body)
            {
                decrypted = (new, plaintext, true)
                account = updated
            }
        }
        guard let decrypted else {
            logger.notice("an Olm message that does not decrypt; its sender gets a new session")
            try await unwedge(user: message.sender, curve25519: envelope.senderKey, session: session, http: http)
            return
        }
        // Kept before anything is acted on: a chain step is never taken twice, and a one-time key
        // a session was started from is gone for good.
        var changes = [CryptoStore.set(name, decrypted.session.state)]
        if decrypted.newSession {
            record.account = account.state
            changes.append(CryptoStore.set("account", record))
        }
        try store.write(changes)
        if decrypted.newSession {
            keptDevice(record)
            logger.info("a device started a new Olm session with this one", metadata: ["user": "\(message.sender)"])
        }
        let payload: IncomingOlm.Payload
        do {
            payload = try IncomingOlm.payload(
                decrypted.plaintext, sender: message.sender, recipient: session.userID,
                recipientEd25519: account.ed25519)
        } catch {
            logger.warning("an Olm message refused", metadata: ["user": "\(message.sender)", "why": "\(error)"])
            return
        }
        guard
            try await listedDevice(
                of: message.sender, curve25519: envelope.senderKey, session: session, http: http)?.ed25519
                == payload.senderEd25519
        else {
            logger.warning(
                "an Olm message whose sender's keys are not the ones listed for its device; dropped",
                metadata: ["user": "\(message.sender)"])
            return
        }
        switch payload.type {
        case let type where type.hasPrefix("m.key.verification."):
            keepVerificationMessages([ToDeviceEvent(sender: message.sender, type: type, content: payload.content)])
        case "m.room_key_request":
            try await answerKeyRequest(payload.content, from: message.sender, session: session, http: http)
        case "m.dummy": break
        default:
            logger.debug(
                "an encrypted to-device message of a type Ferry does not act on", metadata: ["type": "\(payload.type)"])
        }
    }

    /// A new Olm session to the device with `curve25519`, and `m.dummy` over it: the device can
    /// read Ferry's messages again. Once an hour for each device; one whose keys the server does
    /// not list (or that do not verify) gets nothing.
    private func unwedge(
        user: String, curve25519: String, session: Session, http: MatrixHTTP
    ) async throws(EncryptionFailure) {
        let (store, record) = try await ready(session)
        let mark = "unwedged:\(curve25519)"
        if let last = try store.load(mark, as: Int64.self), clock() - last < Self.unwedgeInterval, clock() >= last {
            logger.notice("a device was given a new session less than an hour ago; not again yet")
            return
        }
        guard let device = try await listedDevice(of: user, curve25519: curve25519, session: session, http: http)
        else {
            logger.notice(
                "an undecryptable message from a device the server does not list", metadata: ["user": "\(user)"])
            return
        }
        let account = try Self.account(record)
        let api = DeviceKeysAPI(http: http)
        let claimed: JSONValue
        do { claimed = try await api.claim([user: [device.deviceID]]) } catch { throw .server(error) }
        guard var olm = KeySharing.sessions(from: claimed, for: [device], account: account)[curve25519] else {
            logger.notice("no one-time key to start a new session with", metadata: ["user": "\(user)"])
            return
        }
        let sender = EncryptedEvents.Sender(userID: session.userID, deviceID: session.deviceID, account: account)
        let content: JSONValue
        do {
            content = try EncryptedEvents.toDevice(
                type: "m.dummy", content: [:], from: sender, to: device, session: &olm)
        } catch {
            throw .crypto("\(error)")
        }
        try store.write([CryptoStore.set("olm:\(curve25519)", olm.state), CryptoStore.set(mark, clock())])
        do {
            try await api.sendToDevice(
                type: "m.room.encrypted", transactionID: KeySharing.transactionID(),
                messages: [user: [device.deviceID: content]])
        } catch {
            throw .server(error)
        }
        logger.info(
            "sent m.dummy over a new Olm session", metadata: ["user": "\(user)", "device": "\(device.deviceID)"])
    }

    /// The device of `user` the server lists with this identity key, its keys self-signed.
    private func listedDevice(
        of user: String, curve25519: String, session: Session, http: MatrixHTTP
    ) async throws(EncryptionFailure) -> DeviceIdentity? {
        let listed = try await KeySharing.devices(
            of: [user], except: session, api: DeviceKeysAPI(http: http), logger: logger)
        return listed.devices[user]?.values.first { $0.curve25519 == curve25519 }
    }

    // MARK: - Room-key requests

    /// Answers a request for the key of a room session Ferry holds, when it comes from one of the
    /// person's own devices that they verified under the master key Ferry trusts. Everything else
    /// is left unanswered: a key is never forwarded to a device Ferry cannot vouch for.
    private func answerKeyRequest(
        _ request: JSONValue, from sender: String, session: Session, http: MatrixHTTP
    ) async throws(EncryptionFailure) {
        guard request["action"]?.stringValue == "request",
            request["body"]?["algorithm"]?.stringValue == Self.megolm,
            let roomID = request["body"]?["room_id"]?.stringValue,
            let sessionID = request["body"]?["session_id"]?.stringValue,
            let deviceID = request["requesting_device_id"]?.stringValue
        else { return }
        guard sender == session.userID, deviceID != session.deviceID else {
            logger.notice("a room-key request from another user's device; not answered")
            return
        }
        let (store, record) = try await ready(session)
        guard let room = try store.load("room:\(roomID)", as: RoomRecord.self),
            let outbound = OutboundGroupSession(state: room.session), outbound.sessionID == sessionID
        else { return }
        guard let trusted = try store.load(Self.trustedMaster(session), as: String.self) else {
            logger.notice("a room-key request, and no master key Ferry trusts to judge the device by; not answered")
            return
        }
        let listed = try await KeySharing.devices(
            of: [session.userID], except: session, api: DeviceKeysAPI(http: http), logger: logger)
        guard listed.masterKeys[session.userID] == trusted, let device = listed.devices[session.userID]?[deviceID],
            listed.verifiedByOwner.contains(device.curve25519)
        else {
            logger.notice("a room-key request from a device its owner has not verified; not answered")
            return
        }
        let account = try Self.account(record)
        let forwarded: JSONValue = [
            "algorithm": .string(Self.megolm), "room_id": .string(roomID), "session_id": .string(sessionID),
            "session_key": .string(room.exportedKey ?? outbound.exportedKey),
            "sender_key": .string(account.curve25519), "sender_claimed_ed25519_key": .string(account.ed25519),
            "forwarding_curve25519_key_chain": [],
        ]
        let sharing = KeySharing(
            store: store,
            sender: EncryptedEvents.Sender(userID: session.userID, deviceID: session.deviceID, account: account),
            api: DeviceKeysAPI(http: http), logger: logger)
        let outcome = try await sharing.share(
            forwarded, type: "m.forwarded_room_key", with: [device], withheld: [:], roomID: roomID,
            sessionID: sessionID)
        if !outcome.received.isEmpty {
            logger.info("forwarded a room key to the person's own verified device", metadata: ["device": "\(deviceID)"])
        }
    }
}
