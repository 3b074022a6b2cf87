import Crypto

/// A Megolm session as a recipient holds it: the ratchet from a room key, and the session's
/// public signing key. Ferry sends, so it reads Megolm only to check itself against other
/// implementations and to read its own messages back; the rules are still a recipient's.
public struct InboundGroupSession: Sendable {
    /// The ratchet at the earliest index this session can decrypt.
    public private(set) var ratchet: MegolmRatchet
    /// The session's public signing key; its base64 is the session id.
    public let signingKey: Curve25519.Signing.PublicKey

    /// A session from a signed room key (version 2, as `m.room_key` carries it); the signature
    /// must be the session's own.
    public init(sessionKey: String) throws(CryptoError) {
        guard let bytes = UnpaddedBase64.decode(sessionKey) else { throw .malformed("a room key that is not base64") }
        guard bytes.count == 229 else { throw .malformed("a room key of \(bytes.count) bytes, not 229") }
        guard bytes[0] == 2 else { throw .unsupported("room key version \(bytes[0])") }
        guard let key = try? Curve25519.Signing.PublicKey(rawRepresentation: bytes[133..<165]) else {
            throw .malformed("a room key with an unusable signing key")
        }
        guard key.isValidSignature(bytes[165...], for: bytes[..<165]) else {
            throw .authenticationFailed("the room key's signature is not the session's")
        }
        let index = bytes[1..<5].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        ratchet = MegolmRatchet(bytes: Array(bytes[5..<133]), index: index)!
        signingKey = key
    }

    /// The session as it is exported (version 1, unsigned: key backups and forwarded keys), from
    /// `index` on; nil for an index before the first this session knows.
    public func export(at index: UInt32) -> String? {
        guard index >= ratchet.index else { return nil }
        var at = ratchet
        try? at.advance(to: index)
        var bytes: [UInt8] = [1]
        withUnsafeBytes(of: index.bigEndian) { bytes += $0 }
        return UnpaddedBase64.encode(bytes + at.bytes + signingKey.rawRepresentation)
    }

    /// The session id, as `m.room.encrypted` names it.
    public var sessionID: String { UnpaddedBase64.encode(signingKey.rawRepresentation) }

    /// Decrypts one message (base64, as in `ciphertext`): checks the signature, reaches the
    /// message's index from the first known one, checks the MAC, decrypts. The session itself
    /// does not move, so messages may arrive in any order.
    public func decrypt(_ base64: String) throws(CryptoError) -> (plaintext: [UInt8], index: UInt32) {
        guard let bytes = UnpaddedBase64.decode(base64) else { throw .malformed("a Megolm message that is not base64") }
        let message = try MegolmMessage(bytes: bytes, sessionKey: signingKey)
        guard message.index >= ratchet.index else {
            throw .replayedOrTooFar(
                "message \(message.index) is before this session's first known index \(ratchet.index)")
        }
        var at = ratchet
        try at.advance(to: message.index)
        let cipher = MessageCipher(secret: at.bytes, info: "MEGOLM_KEYS")
        let parts = message.fieldsAndMAC
        guard cipher.verify(parts.mac, of: parts.fields) else {
            throw .authenticationFailed("the Megolm message's MAC")
        }
        return (try cipher.decrypt(message.ciphertext), message.index)
    }
}
