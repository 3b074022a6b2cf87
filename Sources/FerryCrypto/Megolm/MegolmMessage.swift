import Crypto

/// One Megolm message as it travels in `m.room.encrypted`'s `ciphertext`: version 3, the message
/// index (field 1) and the AES-CBC ciphertext (field 2), an 8-byte MAC over those, and the
/// session's Ed25519 signature over everything before it.
public struct MegolmMessage: Sendable, Equatable {
    static let version: UInt8 = 3
    static let signatureLength = 64

    /// The ratchet index the message was encrypted at.
    public let index: UInt32
    /// The encrypted body.
    public let ciphertext: [UInt8]
    /// The whole message's bytes (fields, MAC, signature).
    public let bytes: [UInt8]

    /// Encrypts `plaintext` with the ratchet at its current index and signs with the session's key.
    static func encrypt(
        _ plaintext: [UInt8], ratchet: MegolmRatchet, signingKey: Curve25519.Signing.PrivateKey
    ) -> MegolmMessage {
        let cipher = MessageCipher(secret: ratchet.bytes, info: "MEGOLM_KEYS")
        let ciphertext = cipher.encrypt(plaintext)
        var writer = ProtoWriter(version: version)
        writer.varint(field: 1, UInt64(ratchet.index))
        writer.data(field: 2, ciphertext)
        let signed = writer.bytes + cipher.mac(writer.bytes)
        // BoringSSL's Ed25519 signs deterministically; it cannot fail for a valid key.
        let signature = Array(try! signingKey.signature(for: signed))
        return MegolmMessage(index: ratchet.index, ciphertext: ciphertext, bytes: signed + signature)
    }

    init(index: UInt32, ciphertext: [UInt8], bytes: [UInt8]) {
        self.index = index
        self.ciphertext = ciphertext
        self.bytes = bytes
    }

    /// Reads a message and checks its signature against the session's key; the MAC is checked on
    /// decryption, when the ratchet for its index is known.
    public init(bytes: [UInt8], sessionKey: Curve25519.Signing.PublicKey) throws(CryptoError) {
        let minimum = 1 + MessageCipher.macLength + Self.signatureLength
        guard bytes.count > minimum else { throw .malformed("a Megolm message shorter than its MAC and signature") }
        let signedEnd = bytes.count - Self.signatureLength
        guard sessionKey.isValidSignature(bytes[signedEnd...], for: bytes[..<signedEnd]) else {
            throw .authenticationFailed("the Megolm message's signature is not the session's")
        }
        let fieldsEnd = signedEnd - MessageCipher.macLength
        let fields = try ProtoFields(bytes[..<fieldsEnd])
        guard fields.version == Self.version else { throw .unsupported("Megolm message version \(fields.version)") }
        guard let index = fields.varints[1], index <= UInt64(UInt32.max), let ciphertext = fields.data[2] else {
            throw .malformed("a Megolm message without its index or ciphertext")
        }
        self.init(index: UInt32(index), ciphertext: ciphertext, bytes: bytes)
    }

    /// The index of a message of the session `sessionID` (its Ed25519 key, unpadded base64), read
    /// from `ciphertext` as a room holds it (no key is needed: the index is outside the
    /// encryption). Nil unless the session's key signed the message, so that no one but the
    /// session's owner can claim an index for it.
    public static func index(ofCiphertext ciphertext: String, sessionID: String) -> UInt32? {
        guard
            let key = UnpaddedBase64.decode(sessionID).flatMap({
                try? Curve25519.Signing.PublicKey(rawRepresentation: $0)
            }),
            let bytes = UnpaddedBase64.decode(ciphertext),
            let message = try? MegolmMessage(bytes: bytes, sessionKey: key)
        else { return nil }
        return message.index
    }

    /// The encoded fields, and the MAC that follows them.
    var fieldsAndMAC: (fields: ArraySlice<UInt8>, mac: ArraySlice<UInt8>) {
        let macEnd = bytes.count - Self.signatureLength
        return (bytes[..<(macEnd - MessageCipher.macLength)], bytes[(macEnd - MessageCipher.macLength)..<macEnd])
    }
}
