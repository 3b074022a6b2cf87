import Crypto
import FerryCore
import Foundation

/// Reading an Olm-encrypted to-device message (`m.room.encrypted` with
/// `m.olm.v1.curve25519-aes-sha2`) addressed to Ferry's device, without I/O: the part of the
/// content meant for it, and the checks the spec asks of the decrypted payload. The session that
/// decrypts it is the caller's (kept, or started from the pre-key message).
public enum IncomingOlm {
    public static let algorithm = "m.olm.v1.curve25519-aes-sha2"

    /// The ciphertext for our identity key.
    public struct Envelope: Sendable, Equatable {
        /// The sending device's Curve25519 identity key.
        public var senderKey: String
        /// 0: a pre-key message (it may start a session); 1: a normal one.
        public var type: Int
        public var body: String

        /// A short digest of the message, to know it again: a sync from no token (after a
        /// restart) hands over the messages the last one did, and a message is acted on once.
        public var digest: String {
            let hash = SHA256.hash(data: Array("\(senderKey)|\(type)|\(body)".utf8))
            return String(UnpaddedBase64.encode(Array(hash)).prefix(22))
        }
    }

    /// The envelope of `content` for the device whose identity key is `ourCurve25519`.
    public static func envelope(_ content: JSONValue, ourCurve25519: String) throws(CryptoError) -> Envelope {
        guard content["algorithm"]?.stringValue == algorithm else {
            throw .unsupported("to-device algorithm \(content["algorithm"]?.stringValue ?? "none")")
        }
        guard let senderKey = content["sender_key"]?.stringValue, UnpaddedBase64.decode(senderKey)?.count == 32
        else { throw .malformed("an Olm message without a Curve25519 sender key") }
        guard let mine = content["ciphertext"]?[ourCurve25519] else {
            throw .malformed("an Olm message with no ciphertext for this device")
        }
        guard let type = mine["type"]?.intValue, type == 0 || type == 1, let body = mine["body"]?.stringValue else {
            throw .malformed("an Olm ciphertext without a type 0 or 1 and a body")
        }
        return Envelope(senderKey: senderKey, type: Int(type), body: body)
    }

    /// A decrypted payload, checked.
    public struct Payload: Sendable {
        public var type: String
        public var content: JSONValue
        /// The Ed25519 key the sender claims for its device: the caller checks that the device
        /// the server lists with the sender's identity key has this very key.
        public var senderEd25519: String
    }

    /// The payload, when it was meant for this device and says the sender the server named: the
    /// spec's checks that stop a message being replayed to another device or passed off as
    /// another user's.
    public static func payload(
        _ plaintext: [UInt8], sender: String, recipient: String, recipientEd25519: String
    ) throws(CryptoError) -> Payload {
        guard let value = try? JSONDecoder().decode(LenientJSON.self, from: Data(plaintext)).value,
            value.objectValue != nil
        else {
            throw .malformed("an Olm payload that is not a JSON object")
        }
        guard value["sender"]?.stringValue == sender else {
            throw .authenticationFailed("the payload's sender is not the one the server named")
        }
        guard value["recipient"]?.stringValue == recipient,
            value["recipient_keys"]?["ed25519"]?.stringValue == recipientEd25519
        else { throw .authenticationFailed("the payload was meant for another device") }
        guard let type = value["type"]?.stringValue, let content = value["content"], content.objectValue != nil,
            let ed25519 = value["keys"]?["ed25519"]?.stringValue
        else { throw .malformed("an Olm payload without type, content or the sender's Ed25519 key") }
        return Payload(type: type, content: content, senderEd25519: ed25519)
    }
}
