import FerryCore
import FerryCrypto
import FerryMatrix

/// What other devices send to Ferry's device, taken from the syncs Ferry makes anyway (before each
/// encrypted event, and while an emoji verification listens), handled in Ferry's turn
/// (`exclusively`), so that no Olm session is stepped by two tasks:
///
/// - **Olm messages** (`m.room.encrypted`) are decrypted with the device's kept session, or a new
///   one their pre-key message starts (the sender lost the old one and made another: Ferry's next
///   room keys go over it, and the rooms' current keys go to it again). A verification message
///   that came encrypted goes to the verification inbox; `m.dummy` only brings the session; room
///   keys other devices send Ferry are dropped (Ferry reads no room).
/// - **A message that does not decrypt** means the sender's session with Ferry is wedged: Ferry
///   starts a new one and sends `m.dummy` over it, at most once an hour for each device, as the
///   spec asks, and only to the user whose session it is.
/// - **Room-key requests** (`m.room_key_request`) from the person's own devices that they verified
///   under the master key Ferry trusts get the room's current session by `m.forwarded_room_key`;
///   anyone else's are never answered.
///
/// A message is handled once: a pre-key message of a session Ferry holds that does not decrypt on
/// it is a replay (never a new session), and digests of the last messages are kept. None of it may
/// fail what Ferry is sending: trouble is logged, and the message is dropped (the server has
/// already handed it over).
extension Encryption {
    /// Messages held at most between two reads: a sender flooding Ferry's device gets no more.
    static let inboxLimit = 200
    /// How often a device gets a new session and `m.dummy` from Ferry (µs): an hour.
    static let unwedgeInterval: Int64 = 3_600_000_000
    /// New sessions Ferry starts in one pass: each costs a claim, and junk must not make a send wait.
    static let unwedgesPerPass = 5
    /// Digests of handled messages kept, to know a message handed over again.
    static let seenLimit = 400

    /// Keeps the messages of a sync this inbox handles (the rest are verification's, or nobody's).
    func keepInbox(_ events: [ToDeviceEvent]) {
        let wanted = events.filter { $0.type == "m.room.encrypted" || $0.type == "m.room_key_request" }
        inbox += wanted.prefix(max(0, Self.inboxLimit - inbox.count))
    }

    /// Handles what the inbox holds, in the order it came. Called in Ferry's turn.
    func handleInbox(session: Session, http: MatrixHTTP) async {
        guard !inbox.isEmpty else { return }
        let messages = inbox
        inbox = []
        do { try await handle(messages, session: session, http: http) } catch {
            logger.error("messages to this device could not be handled", metadata: ["error": "\(error)"])
        }
    }

    /// What one pass found: decrypted payloads to act on, requests, and senders to repair.
    private struct Pass {
        var payloads: [(sender: String, curve25519: String, payload: IncomingOlm.Payload)] = []
        var requests: [(sender: String, content: JSONValue)] = []
        var wedged: [(sender: String, curve25519: String)] = []
        /// Sessions as they are after this pass, by the other device's identity key.
        var sessions: [String: OlmSession] = [:]
        /// Identity keys whose session is new in this pass (the account lost a one-time key).
        var started: Set<String> = []
        /// Whose each new session is, once its payload named this user's sender: the user.
        var owners: [String: String] = [:]
    }

    private func handle(_ messages: [ToDeviceEvent], session: Session, http: MatrixHTTP) async throws(EncryptionFailure)
    {
        var (store, record) = try await ready(session)
        var account = try Self.account(record)
        var seen = try store.load("inbox-seen", as: [String].self) ?? []
        var pass = Pass()
        for message in messages {
            if message.type == "m.room_key_request" {
                pass.requests.append((message.sender, message.content))
                continue
            }
            let envelope: IncomingOlm.Envelope
            do { envelope = try IncomingOlm.envelope(message.content, ourCurve25519: account.curve25519) } catch {
                logger.notice("an encrypted to-device message not for this device", metadata: ["why": "\(error)"])
                continue
            }
            guard !seen.contains(envelope.digest) else { continue }
            guard
                let plaintext = try decrypt(
                    envelope, from: message.sender, account: &account, pass: &pass, store: store)
            else { continue }
            // Only what decrypted: junk must not push the digests of real messages out.
            seen.append(envelope.digest)
            do {
                let payload = try IncomingOlm.payload(
                    plaintext, sender: message.sender, recipient: session.userID, recipientEd25519: account.ed25519)
                if pass.started.contains(envelope.senderKey) { pass.owners[envelope.senderKey] = message.sender }
                pass.payloads.append((message.sender, envelope.senderKey, payload))
            } catch {
                logger.warning("an Olm message refused", metadata: ["user": "\(message.sender)", "why": "\(error)"])
            }
        }
        // Kept, in one transaction, before anything is acted on: a chain step is never taken
        // twice, a one-time key a session was started from is gone for good, and a message handed
        // over again is known.
        var changes = pass.sessions.map { CryptoStore.set("olm:\($0.key)", $0.value.state) }
        changes += pass.owners.map { CryptoStore.set("olm-owner:\($0.key)", $0.value) }
        if !pass.started.isEmpty {
            record.account = account.state
            changes.append(CryptoStore.set("account", record))
        }
        changes.append(CryptoStore.set("inbox-seen", Array(seen.suffix(Self.seenLimit))))
        try store.write(changes)
        if !pass.started.isEmpty {
            keptDevice(record)
            logger.info(
                "devices started new Olm sessions with this one", metadata: ["devices": "\(pass.started.count)"])
        }
        if !pass.owners.isEmpty { try giveRoomKeysAgain(to: Set(pass.owners.keys), store: store) }
        await act(on: pass, account: account, session: session, http: http)
    }

    /// The plaintext of one message, with the session that decrypted it noted in `pass`; nil
    /// (and the sender noted as wedged, or the message dropped) when it does not decrypt.
    private func decrypt(
        _ envelope: IncomingOlm.Envelope, from sender: String, account: inout OlmAccount, pass: inout Pass,
        store: CryptoStore
    ) throws(EncryptionFailure) -> [UInt8]? {
        let key = envelope.senderKey
        var kept = pass.sessions[key]
        if kept == nil, let state = try store.load("olm:\(key)", as: OlmSession.State.self) {
            kept = try? OlmSession(state: state)
        }
        if var session = kept {
            if let plaintext = try? session.decrypt(type: envelope.type, body: envelope.body) {
                pass.sessions[key] = session
                return plaintext
            }
            if envelope.type == 0 && session.matches(preKeyMessage: envelope.body) {
                logger.notice("a pre-key message of a kept session that does not decrypt on it; dropped")
                return nil
            }
        }
        if envelope.type == 0 {
            // The pre-key message's own key agreement proves the sender holds this identity key.
            var updated = account
            if let (session, plaintext) = try? OlmSession.inbound(
                to: &updated, theirIdentityKey: key, preKeyMessage: envelope.body)
            {
                account = updated
                pass.sessions[key] = session
                pass.started.insert(key)
                return plaintext
            }
        }
        logger.notice("an Olm message that does not decrypt", metadata: ["user": "\(sender)"])
        pass.wedged.append((sender, key))
        return nil
    }

    /// Acts on what the pass decrypted, then answers requests, then repairs wedged sessions; each
    /// on its own, so that one failing does not drop the rest.
    private func act(on pass: Pass, account: OlmAccount, session: Session, http: MatrixHTTP) async {
        var listed: KeySharing.Listed?
        for (sender, key, payload) in pass.payloads {
            // Ferry acts only on its own person's verification messages and key requests; room
            // keys others send, m.dummy and anything else cost nothing, not even a query.
            guard sender == session.userID,
                payload.type.hasPrefix("m.key.verification.") || payload.type == "m.room_key_request"
            else { continue }
            do {
                // The Ed25519 key the payload claims must be the one listed for the sending device.
                if listed == nil {
                    listed = try await KeySharing.devices(
                        of: [sender], except: session, api: DeviceKeysAPI(http: http), logger: logger)
                }
                guard listed?.device(of: sender, curve25519: key)?.ed25519 == payload.senderEd25519
                else {
                    logger.warning("an Olm message whose sender's keys are not the ones listed for its device; dropped")
                    continue
                }
                if payload.type == "m.room_key_request" {
                    try await answerKeyRequest(
                        payload.content, from: sender, account: account, session: session, http: http)
                } else {
                    keepVerificationMessages([
                        ToDeviceEvent(sender: sender, type: payload.type, content: payload.content)
                    ])
                }
            } catch {
                logger.error("a message to this device could not be acted on", metadata: ["error": "\(error)"])
            }
        }
        for request in pass.requests {
            do {
                try await answerKeyRequest(
                    request.content, from: request.sender, account: account, session: session, http: http)
            } catch {
                logger.error("a room-key request could not be answered", metadata: ["error": "\(error)"])
            }
        }
        var repaired: Set<String> = []
        var seenKeys: Set<String> = []
        for wedged in pass.wedged where seenKeys.insert(wedged.curve25519).inserted {
            guard seenKeys.count <= Self.unwedgesPerPass else { break }
            do {
                if try await unwedge(
                    user: wedged.sender, curve25519: wedged.curve25519, account: account, session: session, http: http)
                {
                    repaired.insert(wedged.curve25519)
                }
            } catch {
                logger.error("a wedged Olm session could not be repaired", metadata: ["error": "\(error)"])
            }
        }
        if !repaired.isEmpty {
            do { try giveRoomKeysAgain(to: repaired, store: try store(for: session)) } catch {
                logger.error("devices given new sessions could not be marked for their rooms' keys")
            }
        }
    }

    /// The rooms whose current key a device with a new session had: it is given again with the
    /// room's next event (the device may have lost it with its old session). Marked apart from
    /// `sharedWith`, which rotation reads. A record not read in this process is written without
    /// being remembered: its first use still checks it against the room (`isBehindTheRoom`).
    private func giveRoomKeysAgain(to keys: Set<String>, store: CryptoStore) throws(EncryptionFailure) {
        let names: [String]
        do { names = try records.cryptoRecords(prefix: "room:").map(\.name) } catch { throw .storage("\(error)") }
        for name in names {
            let cached = roomRecords[name]
            var kept = cached
            if kept == nil { kept = try store.load(name, as: RoomRecord.self) }
            guard var room = kept else { continue }
            let had = room.sharedWith.values.flatMap(\.values).filter { keys.contains($0) }
            let again = Set(had).subtracting(room.resend ?? [])
            guard !again.isEmpty else { continue }
            room.resend = (room.resend ?? []) + again.sorted()
            if cached != nil {
                try keep(room, as: name, in: store)
            } else {
                try store.write([CryptoStore.set(name, room)])
            }
        }
    }

    /// A new Olm session to the device with `curve25519`, and `m.dummy` over it: the device can
    /// read Ferry's messages again. Only for a session Ferry holds with that very user (anyone can
    /// name another's identity key in a message that does not decrypt, and a device with no
    /// session gets a new one with Ferry's next room key anyway); sessions from before owners
    /// were kept are repaired by the other side's own new session, whose pre-key message proves
    /// its key. Once an hour for each device (marked before any request). True when sent.
    private func unwedge(
        user: String, curve25519: String, account: OlmAccount, session: Session, http: MatrixHTTP
    ) async throws(EncryptionFailure) -> Bool {
        let (store, _) = try await ready(session)
        guard try store.load("olm-owner:\(curve25519)", as: String.self) == user else {
            logger.notice(
                "an undecryptable message naming a session Ferry does not hold with its sender; ignored",
                metadata: ["user": "\(user)"])
            return false
        }
        let mark = "unwedged:\(curve25519)"
        if let last = try store.load(mark, as: Int64.self), clock() - last < Self.unwedgeInterval, clock() >= last {
            logger.notice("a device was given a new session less than an hour ago; not again yet")
            return false
        }
        try store.write([CryptoStore.set(mark, clock())])
        let api = DeviceKeysAPI(http: http)
        let listed = try await KeySharing.devices(of: [user], except: session, api: api, logger: logger)
        guard let device = listed.device(of: user, curve25519: curve25519) else {
            logger.notice(
                "an undecryptable message from a device the server does not list", metadata: ["user": "\(user)"])
            return false
        }
        let claimed: JSONValue
        do { claimed = try await api.claim([user: [device.deviceID]]) } catch { throw .server(error) }
        guard var olm = KeySharing.sessions(from: claimed, for: [device], account: account)[curve25519] else {
            logger.notice("no one-time key to start a new session with", metadata: ["user": "\(user)"])
            return false
        }
        let sender = EncryptedEvents.Sender(userID: session.userID, deviceID: session.deviceID, account: account)
        let content: JSONValue
        do {
            content = try EncryptedEvents.toDevice(
                type: "m.dummy", content: [:], from: sender, to: device, session: &olm)
        } catch {
            throw .crypto("\(error)")
        }
        try store.write([CryptoStore.set("olm:\(curve25519)", olm.state)])
        do {
            try await api.sendToDevice(
                type: "m.room.encrypted", transactionID: KeySharing.transactionID(),
                messages: [user: [device.deviceID: content]])
        } catch {
            throw .server(error)
        }
        logger.info(
            "sent m.dummy over a new Olm session", metadata: ["user": "\(user)", "device": "\(device.deviceID)"])
        return true
    }

    // MARK: - Room-key requests

    /// Answers a request for the key of a room session Ferry holds, when it comes from one of the
    /// person's own devices that they verified under the master key Ferry trusts. Everything else
    /// is left unanswered: a key is never forwarded to a device Ferry cannot vouch for.
    private func answerKeyRequest(
        _ request: JSONValue, from sender: String, account: OlmAccount, session: Session, http: MatrixHTTP
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
        let store = try store(for: session)
        guard let room = try store.load("room:\(roomID)", as: RoomRecord.self),
            let outbound = OutboundGroupSession(state: room.session), outbound.sessionID == sessionID
        else { return }
        guard let trusted = try store.load(Self.trustedMaster(session), as: String.self) else {
            logger.notice("a room-key request, and no master key Ferry trusts to judge the device by; not answered")
            return
        }
        let api = DeviceKeysAPI(http: http)
        let listed = try await KeySharing.devices(of: [session.userID], except: session, api: api, logger: logger)
        guard listed.masterKeys[session.userID] == trusted, let device = listed.devices[session.userID]?[deviceID],
            listed.verifiedByOwner.contains(device.curve25519)
        else {
            logger.notice("a room-key request from a device its owner has not verified; not answered")
            return
        }
        let forwarded: JSONValue = [
            "algorithm": .string(Self.megolm), "room_id": .string(roomID), "session_id": .string(sessionID),
            "session_key": .string(room.firstKey(of: outbound)),
            "sender_key": .string(account.curve25519), "sender_claimed_ed25519_key": .string(account.ed25519),
            "forwarding_curve25519_key_chain": [],
        ]
        let sharing = KeySharing(
            store: store,
            sender: EncryptedEvents.Sender(userID: session.userID, deviceID: session.deviceID, account: account),
            api: api, logger: logger)
        let outcome = try await sharing.share(
            forwarded, type: "m.forwarded_room_key", with: [device], withheld: [:], roomID: roomID,
            sessionID: sessionID)
        if !outcome.received.isEmpty {
            logger.info("forwarded a room key to the person's own verified device", metadata: ["device": "\(deviceID)"])
        }
    }
}
