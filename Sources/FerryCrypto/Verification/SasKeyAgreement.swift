import Crypto

/// The ephemeral X25519 key of one side of a SAS, made for one verification and never kept: a
/// verification that is interrupted starts again with new keys.
struct SasKeyPair: Sendable {
    private let privateKey: Curve25519.KeyAgreement.PrivateKey

    init(privateKey: Curve25519.KeyAgreement.PrivateKey = .init()) {
        self.privateKey = privateKey
    }

    /// Our public key, unpadded base64: what `m.key.verification.key` carries.
    var publicKey: String { UnpaddedBase64.encode(privateKey.publicKey.rawRepresentation) }

    /// The secret shared with the holder of `theirs` (the other side's `key`). Refused unless it
    /// is the canonical unpadded base64 of 32 bytes: the key string goes into the commitment and
    /// into the SAS info as sent, and clients differ on whether they re-encode it (libolm's nio
    /// uses the string, vodozemac re-encodes), so only a string both readings agree on is taken.
    func agree(with theirs: String) throws(VerificationCancel) -> SasSecret {
        guard let bytes = UnpaddedBase64.decode(theirs), bytes.count == 32, UnpaddedBase64.encode(bytes) == theirs
        else {
            throw VerificationCancel(.invalidMessage, "the other side's key is not a 32-byte key in unpadded base64")
        }
        // OlmKDF.agree also refuses a low-order point, whose all-zero secret anyone knows.
        guard let secret = try? OlmKDF.agree(privateKey, bytes) else {
            throw VerificationCancel(.invalidMessage, "the other side's key cannot be agreed with")
        }
        return SasSecret(secret: SymmetricKey(data: secret))
    }
}

/// The X25519 secret both sides share once the keys are exchanged, and the two things SAS draws
/// from it, each through HKDF-SHA-256 without salt and with an info string that binds it to
/// this verification: the bytes shown to the people, and the key of each MAC.
struct SasSecret: Sendable {
    let secret: SymmetricKey

    /// `count` bytes of HKDF(secret, info). HKDF's output for a shorter count is a prefix of a
    /// longer one, so the five bytes of `decimal` are the first five of the six of `emoji`.
    func bytes(info: String, count: Int) -> [UInt8] {
        HKDF<SHA256>.deriveKey(
            inputKeyMaterial: secret, salt: [UInt8](), info: Array(info.utf8), outputByteCount: count
        )
        .withUnsafeBytes { Array($0) }
    }

    /// HMAC-SHA-256 of `input` under a key of its own, HKDF(secret, info) of 32 bytes.
    func mac(_ input: String, info: String) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: Array(input.utf8), using: macKey(info: info)))
    }

    /// Whether `tag` is that MAC, compared in constant time (swift-crypto's check).
    func isMac(_ tag: [UInt8], of input: String, info: String) -> Bool {
        HMAC<SHA256>.isValidAuthenticationCode(tag, authenticating: Array(input.utf8), using: macKey(info: info))
    }

    private func macKey(info: String) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: secret, salt: [UInt8](), info: Array(info.utf8), outputByteCount: 32)
    }
}
