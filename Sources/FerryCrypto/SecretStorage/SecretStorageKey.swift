import _CryptoExtras
import Crypto
import FerryCore

/// A key of the account's secret storage (`m.secret_storage.v1.aes-hmac-sha2`), checked against
/// its description in account data, and the secrets it opens. Each secret has its own keys:
/// HKDF-SHA-256 of the storage key (salt: 32 zero bytes, info: the secret's name) gives an
/// AES-256-CTR key and an HMAC-SHA-256 key; the MAC covers the ciphertext.
public struct SecretStorageKey: Sendable {
    /// The one secret storage algorithm the spec defines, and the one Ferry reads and writes.
    public static let algorithm = "m.secret_storage.v1.aes-hmac-sha2"
    /// A passphrase's PBKDF2 rounds are the account's choice (Element uses 500 000), read from a
    /// server: more than this would let a server keep Ferry busy for minutes.
    public static let maximumRounds = 5_000_000

    /// Its id (`m.secret_storage.key.<id>` holds its description).
    public let keyID: String
    private let key: SymmetricKey

    /// The key `keyBytes` is said to be for the description `description`: true when the
    /// description's check (the MAC of 32 zero bytes encrypted under the name "") matches. A
    /// description without a check accepts any key; opening a secret then tells.
    public init(keyID: String, key: SymmetricKey, description: JSONValue) throws(Problem) {
        guard description["algorithm"]?.stringValue == Self.algorithm else {
            throw .unsupported(description["algorithm"]?.stringValue ?? "none")
        }
        self.keyID = keyID
        self.key = key
        if let iv = description["iv"]?.stringValue, let mac = description["mac"]?.stringValue {
            guard let sealed = try? seal([UInt8](repeating: 0, count: 32), name: "", iv: Self.bytes(iv, count: 16)),
                let expected = UnpaddedBase64.decode(mac), Self.equal(sealed.mac, expected)
            else { throw .wrongKey }
        }
    }

    /// A new key's description, as a client setting up secret storage writes it into
    /// `m.secret_storage.key.<id>`: the algorithm and the check (32 zero bytes encrypted under
    /// the name "", and their MAC).
    public func description() throws(Problem) -> JSONValue {
        var iv = (0..<16).map { _ in UInt8.random(in: 0...255) }
        iv[8] &= 0x7F
        let check = try seal([UInt8](repeating: 0, count: 32), name: "", iv: iv)
        return [
            "algorithm": .string(Self.algorithm), "iv": .string(UnpaddedBase64.encode(iv)),
            "mac": .string(UnpaddedBase64.encode(check.mac)),
        ]
    }

    /// The key a passphrase gives under the description's `passphrase` (`m.pbkdf2`:
    /// PBKDF2-HMAC-SHA-512 over the salt, its rounds, 256 bits).
    public static func key(passphrase: String, description: JSONValue) throws(Problem) -> SymmetricKey {
        guard let settings = description["passphrase"], settings.objectValue != nil else { throw .noPassphrase }
        guard settings["algorithm"]?.stringValue == "m.pbkdf2" else {
            throw .unsupported(settings["algorithm"]?.stringValue ?? "none")
        }
        guard let salt = settings["salt"]?.stringValue,
            let rounds = settings["iterations"]?.intValue.map(Int.init), rounds >= 1, rounds <= maximumRounds,
            (settings["bits"]?.intValue ?? 256) == 256
        else { throw .malformed("its passphrase settings") }
        var text = Array(passphrase.utf8)
        defer { wipe(&text) }
        guard
            let derived = try? KDF.Insecure.PBKDF2.deriveKey(
                from: text, salt: Array(salt.utf8), using: .sha512,
                outputByteCount: 32, unsafeUncheckedRounds: rounds)
        else {
            throw .malformed("its passphrase settings")
        }
        return derived
    }

    /// The secret `name` (e.g. `m.cross_signing.self_signing`) from its account data
    /// (`encrypted.<key id>`: `iv`, `ciphertext`, `mac`), once its MAC is checked.
    public func open(_ name: String, from accountData: JSONValue) throws(Problem) -> String {
        guard let entry = accountData["encrypted"]?[keyID] else { throw .notStoredUnderThisKey(name) }
        guard let iv = entry["iv"]?.stringValue.flatMap({ Self.bytes($0, count: 16) }),
            let ciphertext = entry["ciphertext"]?.stringValue.flatMap(UnpaddedBase64.decode),
            let mac = entry["mac"]?.stringValue.flatMap(UnpaddedBase64.decode)
        else { throw .malformed(name) }
        let (aesKey, macKey) = keys(for: name)
        guard HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: ciphertext, using: macKey) else {
            throw .wrongKey
        }
        guard let nonce = try? AES._CTR.Nonce(nonceBytes: iv),
            let plaintext = try? AES._CTR.decrypt(ciphertext, using: aesKey, nonce: nonce),
            let text = String(validating: Array(plaintext), as: UTF8.self)
        else { throw .malformed(name) }
        return text
    }

    /// `secret` encrypted as the secret `name` under this key, as account data holds it (what a
    /// client setting up secret storage writes; a fresh IV with bit 63 clear, as the spec asks).
    public func seal(secret: String, name: String) throws(Problem) -> JSONValue {
        var iv = (0..<16).map { _ in UInt8.random(in: 0...255) }
        iv[8] &= 0x7F // bit 63: some implementations' counters would carry into the IV's upper half
        let sealed = try seal(Array(secret.utf8), name: name, iv: iv)
        return [
            "encrypted": [
                keyID: [
                    "iv": .string(UnpaddedBase64.encode(iv)),
                    "ciphertext": .string(UnpaddedBase64.encode(sealed.ciphertext)),
                    "mac": .string(UnpaddedBase64.encode(sealed.mac)),
                ]
            ]
        ]
    }

    private func seal(
        _ plaintext: [UInt8], name: String, iv: [UInt8]?
    ) throws(Problem) -> (ciphertext: [UInt8], mac: [UInt8]) {
        let (aesKey, macKey) = keys(for: name)
        guard let iv, let nonce = try? AES._CTR.Nonce(nonceBytes: iv),
            let ciphertext = try? AES._CTR.encrypt(plaintext, using: aesKey, nonce: nonce)
        else { throw .malformed("an IV") }
        return (Array(ciphertext), Array(HMAC<SHA256>.authenticationCode(for: ciphertext, using: macKey)))
    }

    private func keys(for name: String) -> (SymmetricKey, SymmetricKey) {
        let both = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: key, salt: [UInt8](repeating: 0, count: 32),
            info: Array(name.utf8), outputByteCount: 64)
        return both.withUnsafeBytes { (SymmetricKey(data: $0.prefix(32)), SymmetricKey(data: $0.suffix(32))) }
    }

    private static func bytes(_ base64: String, count: Int) -> [UInt8]? {
        UnpaddedBase64.decode(base64).flatMap { $0.count == count ? $0 : nil }
    }

    /// Compares two MACs without stopping at the first difference.
    private static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        a.count == b.count && zip(a, b).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }

    /// Why secret storage could not be opened.
    public enum Problem: Error, Equatable, Sendable {
        /// The key (or the passphrase's) is not this storage's.
        case wrongKey
        /// The key was made from no passphrase: only the recovery key opens it.
        case noPassphrase
        /// An algorithm other than the one this reads.
        case unsupported(String)
        /// The account data is not in the spec's shape.
        case malformed(String)
        /// The secret was stored under another key.
        case notStoredUnderThisKey(String)
    }
}
