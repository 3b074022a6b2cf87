import Crypto
import _CryptoExtras

/// The cipher Olm and Megolm share (`aes-sha2` in their names): from one secret, HKDF-SHA-256
/// (empty salt, an info string naming the protocol) derives an AES-256 key, an HMAC-SHA-256 key
/// and a 16-byte IV; the body is AES-256-CBC with PKCS#7 padding, and the message carries the
/// first 8 bytes of an HMAC-SHA-256 over its encoded fields.
struct MessageCipher {
    static let macLength = 8

    private let aesKey: SymmetricKey
    private let macKey: SymmetricKey
    private let iv: [UInt8]

    /// Keys for an Olm message (`OLM_KEYS`, from its 32-byte message key) or a Megolm message
    /// (`MEGOLM_KEYS`, from the 128-byte ratchet).
    init(secret: [UInt8], info: String) {
        let keys = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: secret), salt: [UInt8](),
            info: Array(info.utf8), outputByteCount: 80)
        let bytes = keys.withUnsafeBytes { Array($0) }
        aesKey = SymmetricKey(data: bytes[0..<32])
        macKey = SymmetricKey(data: bytes[32..<64])
        iv = Array(bytes[64..<80])
    }

    func encrypt(_ plaintext: [UInt8]) -> [UInt8] {
        // Cannot fail: the key is 32 bytes and the IV 16, by construction.
        Array(try! AES._CBC.encrypt(plaintext, using: aesKey, iv: AES._CBC.IV(ivBytes: iv)))
    }

    func decrypt(_ ciphertext: [UInt8]) throws(CryptoError) -> [UInt8] {
        guard !ciphertext.isEmpty, ciphertext.count % 16 == 0,
            let plain = try? AES._CBC.decrypt(ciphertext, using: aesKey, iv: AES._CBC.IV(ivBytes: iv))
        else { throw .malformed("the ciphertext does not decrypt (length or padding)") }
        return Array(plain)
    }

    /// The truncated MAC over a message's encoded fields.
    func mac(_ message: some Sequence<UInt8>) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: Array(message), using: macKey).prefix(Self.macLength))
    }

    /// Whether `tag` is the MAC of `message`, compared in constant time.
    func verify(_ tag: some Sequence<UInt8>, of message: some Sequence<UInt8>) -> Bool {
        let expected = mac(message)
        let given = Array(tag)
        guard given.count == expected.count else { return false }
        return zip(given, expected).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }
}

/// HMAC-SHA-256 of one byte under `key`: the step both ratchets advance by.
func hmacStep(_ key: [UInt8], _ byte: UInt8) -> [UInt8] {
    Array(HMAC<SHA256>.authenticationCode(for: [byte], using: SymmetricKey(data: key)))
}

/// Random bytes from the system's generator (through BoringSSL's key generation, not our own).
func randomBytes(_ count: Int) -> [UInt8] {
    SymmetricKey(size: SymmetricKeySize(bitCount: count * 8)).withUnsafeBytes { Array($0) }
}
