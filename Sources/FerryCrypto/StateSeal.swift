import Crypto
import Foundation

/// Seals what Ferry keeps of its encryption (the account, the Olm and Megolm sessions) before it
/// goes into the database: ChaCha20-Poly1305 under a 256-bit key that is kept in the Secret
/// Service next to the access token, never in the database itself.
///
/// Each sealed record is bound to its name (the associated data): a record copied over another
/// one (an old session state over the new one, say) does not open, so a database edited behind
/// Ferry's back cannot make it reuse a ratchet step it already used.
public struct StateSeal: Sendable {
    /// The version byte in front of every sealed record, for a later change of algorithm.
    static let version: UInt8 = 1

    private let key: SymmetricKey

    /// A seal with a new random key; `keyBytes` is what is to be kept in the Secret Service.
    public init() {
        key = SymmetricKey(size: .bits256)
    }

    /// A seal with the key read back from the Secret Service; nil unless it is 32 bytes.
    public init?(keyBytes: [UInt8]) {
        guard keyBytes.count == 32 else { return nil }
        key = SymmetricKey(data: keyBytes)
    }

    /// The key, to keep in the Secret Service (or the 0600 file beside the token).
    public var keyBytes: [UInt8] { key.withUnsafeBytes { Array($0) } }

    /// `value`'s JSON, sealed for the record `name` (such as "account" or "olm:<session id>").
    public func seal<Value: Encodable>(_ value: Value, as name: String) throws(CryptoError) -> [UInt8] {
        guard let plain = try? JSONEncoder().encode(value),
            let box = try? ChaChaPoly.seal(plain, using: key, authenticating: Array(name.utf8))
        else {
            throw .malformed("a state that cannot be encoded")
        }
        return [Self.version] + Array(box.combined)
    }

    /// A tag for `text` that only the holder of this key can make or recognise: HMAC-SHA-256
    /// under a key derived from the seal's (HKDF, its own label), 16 bytes in base64. Ferry marks
    /// its encrypted events with the tag of their transaction id, to find them again, without
    /// telling anyone else which events belong to one share.
    public func tag(_ text: String) -> String {
        let derived = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: key, info: Array("io.github.ferryshare.transaction-tag".utf8),
            outputByteCount: 32)
        let mac = HMAC<SHA256>.authenticationCode(for: Array(text.utf8), using: derived)
        return UnpaddedBase64.encode(Array(mac).prefix(16))
    }

    /// The value sealed for `name`; refused when the bytes were changed, sealed for another name
    /// or under another key.
    public func open<Value: Decodable>(
        _ sealed: [UInt8], as name: String, type: Value.Type = Value.self
    ) throws(CryptoError) -> Value {
        guard sealed.first == Self.version else {
            throw .unsupported("sealed state version \(sealed.first.map(String.init) ?? "none")")
        }
        guard let box = try? ChaChaPoly.SealedBox(combined: sealed.dropFirst()),
            let plain = try? ChaChaPoly.open(box, using: key, authenticating: Array(name.utf8))
        else {
            throw .authenticationFailed("the kept state \(name) does not open with this key")
        }
        guard let value = try? JSONDecoder().decode(Value.self, from: plain) else {
            throw .malformed("the kept state \(name)")
        }
        return value
    }
}
