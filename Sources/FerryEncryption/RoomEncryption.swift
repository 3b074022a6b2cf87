import FerryCore
import FerryCrypto
import FerryMatrix
import Foundation

/// Encrypting one event for a room: the room's outbound Megolm session made or rotated as the
/// room asks, its key shared by Olm with every device of every reader that lacks it, then the
/// event encrypted with it. Each step is kept before the next request.
extension Encryption {
    static let megolm = "m.megolm.v1.aes-sha2"

    /// The `m.room.encrypted` content for `content` (an event of `type`) in `roomID`, made once per
    /// `transactionID`: asked again (a retry, a restart) it is the same ciphertext, so the server's
    /// transaction id dedupe holds and no message index is ever used twice.
    public func encrypt(
        _ content: JSONValue, type: String, roomID: String, transactionID: String,
        session: Session
    ) async throws(EncryptionFailure) -> JSONValue {
        try await exclusively { () async throws(EncryptionFailure) in
            try await makeEncrypted(content, type: type, roomID: roomID, transactionID: transactionID, session: session)
        }
    }

    private func makeEncrypted(
        _ content: JSONValue, type: String, roomID: String, transactionID: String,
        session: Session
    ) async throws(EncryptionFailure) -> JSONValue {
        let (store, device) = try await ready(session)
        let eventName = "event:\(transactionID)"
        if let made = try store.load(eventName, as: JSONValue.self) { return made }
        let http = http(session)
        let known = try await readers(of: roomID, session: session, http: http)
        let (settings, readers, listed) = (known.settings, known.readers, known.listed)
        guard settings.algorithm == Self.megolm else { throw .unsupportedAlgorithm(settings.algorithm) }
        let account = try Self.account(device)
        let sender = EncryptedEvents.Sender(userID: session.userID, deviceID: session.deviceID, account: account)
        let devices = listed.devices
        // With the setting on, "verified by its owner" only counts under the master key first seen.
        let verified = onlyVerifiedDevices ? try pinnedVerified(listed, store: store) : nil

        let roomName = "room:\(roomID)"
        // Kept in memory as written (write-through): opening it costs more than the rest of an event.
        var record = roomRecords[roomName]
        if record == nil, let stored = try store.load(roomName, as: RoomRecord.self) {
            // Read from disk for the first time in this process: checked against the room first.
            record = try await isBehindTheRoom(stored, roomID: roomID, session: session, http: http) ? nil : stored
        }
        if let kept = record,
            let why = Self.rotation(
                kept, settings: settings, readers: readers, devices: devices,
                verified: verified, now: clock())
        {
            logger.info("new room session", metadata: ["why": "\(why)"])
            record = nil
        }
        if record == nil {
            let new = OutboundGroupSession()
            record = RoomRecord(
                session: new.state, created: clock(), messages: 0, sharedWith: [:],
                sharedHistory: readers.sharedHistory, exportedKey: new.exportedKey)
            try keep(record!, as: roomName, in: store)
        }
        var room = record!
        guard var outbound = OutboundGroupSession(state: room.session) else {
            // TRANSLATORS: completes "{room} is end-to-end encrypted and Ferry could not encrypt for it: {reason}.
            // Nothing was sent there unencrypted."
            throw .crypto(tr("the kept room session does not decode"))
        }
        try await backUp(
            &room, as: roomName, roomID: roomID, outbound: outbound, account: account, store: store, session: session,
            http: http)

        let recipients = room.recipients(among: devices, verified: verified)
        let sharing = KeySharing(store: store, sender: sender, api: DeviceKeysAPI(http: http), logger: logger)
        if !recipients.untold.isEmpty {
            try await sharing.withhold(
                .unverified, from: recipients.untold, roomID: roomID, sessionID: outbound.sessionID)
            room.told(recipients.untold)
            try keep(room, as: roomName, in: store)
        }
        if !recipients.missing.isEmpty {
            let key = EncryptedEvents.roomKey(outbound, roomID: roomID, sharedHistory: readers.sharedHistory)
            let outcome = try await sharing.share(
                key, with: recipients.missing,
                withheld: room.withheldFrom, roomID: roomID, sessionID: outbound.sessionID)
            room.shared(with: outcome.received)
            room.told(outcome.withheld)
            try keep(room, as: roomName, in: store)
        }

        var encrypted: JSONValue
        do {
            encrypted = try EncryptedEvents.roomEvent(
                type: type, content: content, roomID: roomID, from: sender, session: &outbound)
        } catch {
            throw .crypto("\(error)")
        }
        // A tag outside the ciphertext: after a sign-in on a new device Ferry finds what it sent
        // by it (RoomEvents.sent). Keyed, so that only Ferry can tell which events are one share.
        if var members = encrypted.objectValue, let tag = content[MessageContent.transactionKey]?.stringValue {
            members[MessageContent.transactionKey] = .string(store.seal.tag(tag))
            encrypted = .object(members)
        }
        room.session = outbound.state
        room.messages += 1
        try keep(room, as: roomName, in: store, with: [CryptoStore.set(eventName, encrypted)])
        return encrypted
    }

    /// Whether the room holds a message of the record's session at or past the index the record
    /// would use next: the record is older than what was sent (Ferry's state restored from a
    /// backup, or copied from another machine), and encrypting with it would use an index a
    /// second time, the same key for another plaintext. The session is then replaced, never
    /// stepped on. One request, the first time a record is read in a process; the message's own
    /// signature vouches for its index, so a server can make Ferry rotate, never reuse.
    private func isBehindTheRoom(
        _ room: RoomRecord, roomID: String, session: Session, http: MatrixHTTP
    ) async throws(EncryptionFailure) -> Bool {
        guard let outbound = OutboundGroupSession(state: room.session) else { return false }
        let sent: [RoomEvents.SentMegolm]
        do {
            sent = try await RoomEvents(http: http).sentMegolm(in: roomID, by: session.userID, limit: 100)
        } catch {
            throw .server(error)
        }
        let used = sent.filter { $0.sessionID == outbound.sessionID }
            .compactMap { MegolmMessage.index(ofCiphertext: $0.ciphertext, sessionID: outbound.sessionID) }.max()
        guard let used, used >= outbound.messageIndex else { return false }
        logger.warning(
            "the kept room session is behind what was sent with it (a restored copy of Ferry's state?); a new one",
            metadata: ["used": "\(used)", "next": "\(outbound.messageIndex)"])
        return true
    }

    /// Writes the room's record (with `other` changes, in one transaction), then remembers it.
    func keep(
        _ room: RoomRecord, as name: String, in store: CryptoStore,
        with other: [CryptoStore.Change] = []
    ) throws(EncryptionFailure) {
        roomRecords[name] = nil
        try store.write([CryptoStore.set(name, room)] + other)
        roomRecords[name] = room
    }

    /// Why the room's session must be replaced, or nil to keep it: used up (messages or age), or
    /// someone who had its key may no longer read (a member left, a device gone or re-keyed).
    /// Users whose devices the server did not list (a remote server away) count as unchanged.
    /// The devices verified by their owners under the master key Ferry first saw for each owner
    /// (pinned in the store, `master:<user>`): a server that swaps in a master key of its own, to
    /// vouch for a device of its own, gets none of that user's devices counted as verified.
    private func pinnedVerified(
        _ listed: KeySharing.Listed, store: CryptoStore
    ) throws(EncryptionFailure) -> Set<String> {
        var verified = listed.verifiedByOwner
        var pins: [CryptoStore.Change] = []
        for (user, master) in listed.masterKeys {
            let name = "master:\(user)"
            if let pinned = try store.load(name, as: String.self) {
                guard pinned != master else { continue }
                logger.warning(
                    "a user's master key changed; their devices count as unverified", metadata: ["user": "\(user)"])
                for device in listed.devices[user]?.values ?? [:].values { verified.remove(device.curve25519) }
            } else {
                pins.append(CryptoStore.set(name, master))
            }
        }
        if !pins.isEmpty { try store.write(pins) }
        return verified
    }

    /// `verified`: with the setting on, the devices that may have the key; one that had it and is
    /// no longer among them ends the session.
    static func rotation(
        _ room: RoomRecord, settings: EncryptedRooms.Settings, readers: EncryptedRooms.Readers,
        devices: [String: [String: DeviceIdentity]], verified: Set<String>? = nil, now: Int64
    ) -> String? {
        if let verified, room.sharedWith.values.contains(where: { $0.values.contains { !verified.contains($0) } }) {
            return "a device is no longer verified"
        }
        if room.messages >= settings.rotationMessages { return "\(room.messages) messages" }
        // A clock set back counts as time passed: the session's age is never trusted to shrink.
        if now - room.created >= settings.rotationMilliseconds * 1000 || now < room.created { return "its age" }
        if let shared = room.sharedHistory, shared != readers.sharedHistory { return "the history visibility changed" }
        let current = Set(readers.users)
        if room.sharedWith.keys.contains(where: { !current.contains($0) }) { return "a member left" }
        for (user, shared) in room.sharedWith {
            guard let listed = devices[user] else { continue }
            if shared.contains(where: { listed[$0.key]?.curve25519 != $0.value }) { return "a device is gone" }
        }
        return nil
    }
}
