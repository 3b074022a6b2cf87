import Crypto
import Foundation

/// Olm's key derivations, each one line of the specification.
enum OlmKDF {
    /// `R0 ‖ C0,0 = HKDF(0, S, "OLM_ROOT")` for the 3DH secret `S`.
    static func root(sharedSecret: [UInt8]) -> (root: [UInt8], chain: [UInt8]) {
        split(
            HKDF<SHA256>.deriveKey(
                inputKeyMaterial: SymmetricKey(data: sharedSecret), salt: [UInt8](),
                info: Array("OLM_ROOT".utf8), outputByteCount: 64))
    }

    /// `Ri ‖ Ci,0 = HKDF(Ri-1, ECDH(Ti-1, Ti), "OLM_RATCHET")`: a new chain each time the
    /// conversation changes direction.
    static func ratchet(
        root: [UInt8], ours: Curve25519.KeyAgreement.PrivateKey, theirs: [UInt8]
    ) throws(CryptoError) -> (root: [UInt8], chain: [UInt8]) {
        let secret = try agree(ours, theirs)
        return split(
            HKDF<SHA256>.deriveKey(
                inputKeyMaterial: SymmetricKey(data: secret), salt: root,
                info: Array("OLM_RATCHET".utf8), outputByteCount: 64))
    }

    /// `Mi,j = HMAC(Ci,j, 0x01)`, the message key at a chain step.
    static func messageKey(_ chain: [UInt8]) -> [UInt8] { hmacStep(chain, 1) }
    /// `Ci,j+1 = HMAC(Ci,j, 0x02)`, the chain's next step.
    static func nextChain(_ chain: [UInt8]) -> [UInt8] { hmacStep(chain, 2) }

    /// X25519 between our private key and their public bytes; refused for a key of the wrong size
    /// or one that gives the all-zero secret (a low-order point).
    static func agree(_ ours: Curve25519.KeyAgreement.PrivateKey, _ theirs: [UInt8]) throws(CryptoError) -> [UInt8] {
        guard let key = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: theirs),
            let shared = try? ours.sharedSecretFromKeyAgreement(with: key)
        else {
            throw .malformed("a Curve25519 key that cannot be agreed with")
        }
        let bytes = shared.withUnsafeBytes { Array($0) }
        guard bytes.contains(where: { $0 != 0 }) else { throw .malformed("a Curve25519 key of low order") }
        return bytes
    }

    private static func split(_ key: SymmetricKey) -> (root: [UInt8], chain: [UInt8]) {
        let bytes = key.withUnsafeBytes { Array($0) }
        return (Array(bytes[0..<32]), Array(bytes[32..<64]))
    }
}
