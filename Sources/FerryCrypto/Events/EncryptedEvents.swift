import FerryCore

/// The event contents end-to-end encryption puts on the wire, built from the sessions: a room
/// key for one device (Olm, to-device), and a room event (Megolm, `m.room.encrypted`).
public enum EncryptedEvents {
    /// Who Ferry is, as every encrypted event names it.
    public struct Sender: Sendable {
        /// The signed-in user.
        public let userID: String
        /// Ferry's device.
        public let deviceID: String
        /// Ferry's device identity.
        public let account: OlmAccount

        /// Ferry as `userID`'s device `deviceID`, with `account`'s keys.
        public init(userID: String, deviceID: String, account: OlmAccount) {
            self.userID = userID
            self.deviceID = deviceID
            self.account = account
        }
    }

    /// `m.room_key`'s content: the room key of `session` for `roomID`. `sharedHistory` says the
    /// key may be passed on to members who join later (the room's history is visible to them).
    public static func roomKey(_ session: OutboundGroupSession, roomID: String, sharedHistory: Bool) -> JSONValue {
        [
            "algorithm": "m.megolm.v1.aes-sha2", "room_id": .string(roomID), "session_id": .string(session.sessionID),
            "session_key": .string(session.sessionKey), "shared_history": .bool(sharedHistory),
        ]
    }

    /// The to-device content (`m.room.encrypted`, Olm) that carries `type`/`content` to
    /// `recipient` only. The plaintext names sender and recipient and their keys, so the recipient
    /// can tell the message was meant for it and comes from the device it thinks, and carries
    /// Ferry's signed device keys (`sender_device_keys`) for a recipient that has not queried them.
    public static func toDevice(
        type: String, content: JSONValue, from sender: Sender, to recipient: DeviceIdentity,
        session: inout OlmSession
    ) throws(CryptoError) -> JSONValue {
        let plaintext: JSONValue = [
            "type": .string(type), "content": content,
            "sender": .string(sender.userID), "sender_device": .string(sender.deviceID),
            "keys": ["ed25519": .string(sender.account.ed25519)],
            "recipient": .string(recipient.userID), "recipient_keys": ["ed25519": .string(recipient.ed25519)],
            "sender_device_keys": sender.account.deviceKeys(userID: sender.userID, deviceID: sender.deviceID),
        ]
        let (messageType, body) = try session.encrypt(CanonicalJSON.encode(plaintext))
        return [
            "algorithm": "m.olm.v1.curve25519-aes-sha2", "sender_key": .string(sender.account.curve25519),
            "ciphertext": .object([recipient.curve25519: ["type": .int(Int64(messageType)), "body": .string(body)]]),
        ]
    }

    /// `m.room.encrypted`'s content for a room event of `type` with `content` in `roomID`,
    /// encrypted with `session` (which moves one index on: keep its state before sending).
    /// `sender_key` and `device_id` are deprecated but still sent, for clients that look them up.
    public static func roomEvent(
        type: String, content: JSONValue, roomID: String, from sender: Sender,
        session: inout OutboundGroupSession
    ) throws(CryptoError) -> JSONValue {
        let plaintext: JSONValue = ["type": .string(type), "content": content, "room_id": .string(roomID)]
        let ciphertext = try session.encrypt(CanonicalJSON.encode(plaintext))
        return [
            "algorithm": "m.megolm.v1.aes-sha2", "ciphertext": .string(ciphertext),
            "session_id": .string(session.sessionID),
            "sender_key": .string(sender.account.curve25519), "device_id": .string(sender.deviceID),
        ]
    }
}
