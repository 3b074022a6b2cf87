import Crypto

/// Ferry's side of one Megolm session in one room: it encrypts, and it makes the room key that
/// every recipient device gets (`m.room_key`'s `session_key`).
///
/// The state is a value: `encrypt` returns the message and leaves the session one index further.
/// The caller keeps the new state durably *before* the message leaves the process, so that a crash
/// can skip an index but never use one twice.
public struct OutboundGroupSession: Sendable, Equatable {
    /// The ratchet at the index of the next message.
    public private(set) var ratchet: MegolmRatchet
    /// The Ed25519 key that signs every message of the session; its public half is the session id.
    let signingKey: Curve25519.Signing.PrivateKey

    /// A new session with fresh random keys, at index 0.
    public init() {
        ratchet = .random()
        signingKey = Curve25519.Signing.PrivateKey()
    }

    /// A session from its stored state (`State`); nil for bytes of the wrong length.
    public init?(state: State) {
        guard let ratchet = MegolmRatchet(bytes: state.ratchet, index: state.index),
            let key = try? Curve25519.Signing.PrivateKey(rawRepresentation: state.signingKey)
        else { return nil }
        self.ratchet = ratchet
        signingKey = key
    }

    /// The session id: the unpadded base64 of the session's Ed25519 public key.
    public var sessionID: String { UnpaddedBase64.encode(signingKey.publicKey.rawRepresentation) }

    /// The index the next message will have; `rotation_period_msgs` counts against it.
    public var messageIndex: UInt32 { ratchet.index }

    /// The room key for the current index, signed (version 2): what `m.room_key` carries.
    /// A device given it reads this message and every later one, none before.
    public var sessionKey: String {
        let bytes = key(version: 2)
        return UnpaddedBase64.encode(bytes + Array(try! signingKey.signature(for: bytes)))
    }

    /// The session as it is exported (version 1, unsigned) from its current index: what a key
    /// backup keeps and a forwarded key carries. Taken when the session is new, it reads every
    /// message the session sends.
    public var exportedKey: String { UnpaddedBase64.encode(key(version: 1)) }

    /// `version ‖ index (u32, big-endian) ‖ the 128 ratchet bytes ‖ the Ed25519 public key`: the
    /// part both formats share.
    private func key(version: UInt8) -> [UInt8] {
        var bytes: [UInt8] = [version]
        withUnsafeBytes(of: ratchet.index.bigEndian) { bytes += $0 }
        return bytes + ratchet.bytes + signingKey.publicKey.rawRepresentation
    }

    /// Encrypts `plaintext` (the JSON of `{type, content, room_id}`) at the current index and
    /// moves on; returns the base64 for `m.room.encrypted`'s `ciphertext`.
    public mutating func encrypt(_ plaintext: [UInt8]) throws(CryptoError) -> String {
        guard ratchet.index < UInt32.max else { throw .exhausted("the Megolm session has used its last index") }
        let message = MegolmMessage.encrypt(plaintext, ratchet: ratchet, signingKey: signingKey)
        try ratchet.advance(to: ratchet.index + 1)
        return UnpaddedBase64.encode(message.bytes)
    }

    /// What is kept of a session between runs: secret, so kept only inside Ferry's encrypted store.
    public struct State: Codable, Sendable, Equatable {
        /// The 128 ratchet bytes at `index`.
        @KeptBytes public var ratchet: [UInt8]
        /// The index of the next message.
        public var index: UInt32
        /// The raw 32-byte Ed25519 private key.
        @KeptBytes public var signingKey: [UInt8]
    }

    /// The session's state, to keep before sending what `encrypt` returned.
    public var state: State {
        State(ratchet: ratchet.bytes, index: ratchet.index, signingKey: Array(signingKey.rawRepresentation))
    }

    /// Two sessions are equal when their kept states are: same keys, same index.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.state == rhs.state }
}
