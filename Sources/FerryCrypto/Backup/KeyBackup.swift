import Crypto
import FerryCore

/// Server-side key backup (`m.megolm_backup.v1.curve25519-aes-sha2`) as a sender writes it: the
/// room keys of the sessions Ferry creates, encrypted to the backup's public key, so that a device
/// the person adds later reads what Ferry sent. Ferry only writes; the private key that reads the
/// backup never comes near it.
public struct KeyBackup: Sendable {
    public static let algorithm = "m.megolm_backup.v1.curve25519-aes-sha2"

    /// The backup's version, as the server names it (each new backup is a new version).
    public let version: String
    let publicKey: Curve25519.KeyAgreement.PublicKey

    /// The backup `GET /room_keys/version` describes, when it is one Ferry may write to: of this
    /// algorithm, with a Curve25519 public key, and its `auth_data` signed by the master key Ferry
    /// trusts for the account (`trustedMaster`, base64) or by Ferry's own device. The server alone
    /// vouches for nothing: a backup it made up would get every key.
    public init(
        version: String, algorithm: String, authData: JSONValue, userID: String,
        trustedMaster: String?, device: (id: String, ed25519: String)
    ) throws(CryptoError) {
        guard algorithm == Self.algorithm else { throw .unsupported("key backup algorithm \(algorithm)") }
        guard let object = authData.objectValue, let text = object["public_key"]?.stringValue,
            let bytes = UnpaddedBase64.decode(text), bytes.count == 32,
            let key = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: bytes)
        else { throw .malformed("a key backup without a usable public key") }
        let signers: [(keyID: String, key: String)] =
            (trustedMaster.map { [("ed25519:\($0)", $0)] } ?? []) + [("ed25519:\(device.id)", device.ed25519)]
        let signed = signers.contains { signer in
            guard let raw = UnpaddedBase64.decode(signer.key),
                let verifying = try? Curve25519.Signing.PublicKey(rawRepresentation: raw)
            else { return false }
            return DeviceIdentity.isSigned(object, by: verifying, userID: userID, keyID: signer.keyID)
        }
        guard signed else {
            throw .authenticationFailed("the key backup is not signed by a key Ferry trusts for the account")
        }
        self.version = version
        publicKey = key
    }

    /// What `PUT /room_keys/keys/{room}/{session}` takes for a session Ferry created: its key from
    /// `exported` (the unsigned export, version 1) on, with the sending device's keys.
    /// `is_verified`: Ferry backs up its own sessions, whose sender it knows to be itself.
    public func keyBackupData(
        exported: String, senderKey: String, senderEd25519: String
    ) throws(CryptoError)
        -> JSONValue
    {
        guard let bytes = UnpaddedBase64.decode(exported), bytes.count == 165, bytes[0] == 1 else {
            throw .malformed("an exported room key that is not version 1")
        }
        let firstIndex = bytes[1..<5].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        let plaintext: JSONValue = [
            "algorithm": "m.megolm.v1.aes-sha2",
            "forwarding_curve25519_key_chain": [],
            "sender_key": .string(senderKey),
            "sender_claimed_keys": ["ed25519": .string(senderEd25519)],
            "session_key": .string(exported),
        ]
        return [
            "first_message_index": .int(Int64(firstIndex)),
            "forwarded_count": 0,
            "is_verified": true,
            "session_data": encrypt(CanonicalJSON.encode(plaintext)),
        ]
    }

    /// The spec's backup encryption: an ephemeral Curve25519 key agreed with the backup's key;
    /// HKDF-SHA-256 of the shared secret (a salt of 32 zero bytes, which HMAC pads to the same
    /// key as an empty one, and an empty info) gives the AES-256, HMAC and IV keys, as for an Olm
    /// message (`MessageCipher`). The MAC is the first 8 bytes of an HMAC over an *empty* input:
    /// what libolm computes, and so what every restoring client checks, not what the spec's text
    /// says (the MAC of the ciphertext).
    func encrypt(_ plaintext: [UInt8]) -> JSONValue {
        let ephemeral = Curve25519.KeyAgreement.PrivateKey()
        // Cannot fail for a key that decoded: X25519 agreement is defined for every public key.
        let shared = try! ephemeral.sharedSecretFromKeyAgreement(with: publicKey).withUnsafeBytes { Array($0) }
        let cipher = MessageCipher(secret: shared, info: "")
        return [
            "ephemeral": .string(UnpaddedBase64.encode(ephemeral.publicKey.rawRepresentation)),
            "ciphertext": .string(UnpaddedBase64.encode(cipher.encrypt(plaintext))),
            "mac": .string(UnpaddedBase64.encode(cipher.mac([UInt8]()))),
        ]
    }
}
