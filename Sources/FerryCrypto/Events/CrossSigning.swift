import Foundation
import Crypto
import FerryCore

/// Whether a device is verified by its owner: its keys signed by the owner's self-signing key,
/// and that key signed by the owner's master key (cross-signing, as /keys/query lists them).
/// Whether the person trusts the master key is another question (verifying the person); this
/// answers only "did the owner vouch for this device".
public enum CrossSigning {
    /// True when `selfSigningKey` (the user's `self_signing_keys` entry) is the user's, made for
    /// self-signing and signed by `masterKey` (the user's `master_keys` entry, made for master),
    /// and `deviceKeys` carry its signature. Anything missing, malformed or not signed: false.
    public static func isVerifiedByOwner(
        _ deviceKeys: JSONValue, of device: DeviceIdentity,
        masterKey: JSONValue?, selfSigningKey: JSONValue?
    ) -> Bool {
        guard let master = masterKey.flatMap({ key(of: $0, userID: device.userID, usage: "master") }),
            let selfSigning = selfSigningKey.flatMap({ key(of: $0, userID: device.userID, usage: "self_signing") }),
            let selfSigningObject = selfSigningKey?.objectValue,
            DeviceIdentity.isSigned(selfSigningObject, by: master.key, userID: device.userID, keyID: master.id),
            let keys = deviceKeys.objectValue,
            keys["keys"]?["ed25519:\(device.deviceID)"]?.stringValue == device.ed25519
        else { return false }
        return DeviceIdentity.isSigned(keys, by: selfSigning.key, userID: device.userID, keyID: selfSigning.id)
    }

    /// The user's master key (its base64 Ed25519 key) from their `master_keys` entry, when it is
    /// a well-formed master key of theirs: what a client pins on first sight.
    public static func masterKey(_ object: JSONValue?, userID: String) -> String? {
        guard let object, let (id, _) = key(of: object, userID: userID, usage: "master") else { return nil }
        return String(id.dropFirst("ed25519:".count))
    }

    /// The public key (base64) of a cross-signing private key as secret storage keeps it (the
    /// unpadded base64 of its Ed25519 seed, as `m.cross_signing.master`): nil when it is not one.
    public static func publicKey(ofStoredSeed secret: String) -> String? {
        guard let seed = UnpaddedBase64.decode(secret.trimmingCharacters(in: .whitespacesAndNewlines)),
            seed.count == 32, let key = try? Curve25519.Signing.PrivateKey(rawRepresentation: seed)
        else { return nil }
        return UnpaddedBase64.encode(key.publicKey.rawRepresentation)
    }

    /// The one Ed25519 key of a cross-signing key object of `userID` with `usage`.
    static func key(
        of object: JSONValue, userID: String, usage: String
    ) -> (id: String, key: Curve25519.Signing.PublicKey)? {
        guard object["user_id"]?.stringValue == userID,
            case .array(let usages)? = object["usage"], usages.contains(.string(usage)),
            let keys = object["keys"]?.objectValue, keys.count == 1, let (id, value) = keys.first,
            let text = value.stringValue, id == "ed25519:\(text)",
            let bytes = UnpaddedBase64.decode(text),
            let key = try? Curve25519.Signing.PublicKey(rawRepresentation: bytes)
        else {
            return nil
        }
        return (id, key)
    }
}

/// The account's self-signing key, read from secret storage: what vouches for the owner's own
/// devices. Held only while Ferry signs its device with it, then dropped.
public struct SelfSigningKey: Sendable {
    private let key: Curve25519.Signing.PrivateKey
    /// Its public key, base64 (the key id is `ed25519:` and this).
    public let publicKey: String

    /// From the secret `m.cross_signing.self_signing`: the unpadded base64 of the Ed25519 seed.
    public init(secret: String) throws(CryptoError) {
        guard let seed = UnpaddedBase64.decode(secret.trimmingCharacters(in: .whitespacesAndNewlines)),
            seed.count == 32,
            let key = try? Curve25519.Signing.PrivateKey(rawRepresentation: seed)
        else {
            throw .malformed("a self-signing key that is not a 32-byte Ed25519 seed")
        }
        self.key = key
        publicKey = UnpaddedBase64.encode(key.publicKey.rawRepresentation)
    }

    /// Whether this is the key the server publishes as `userID`'s self-signing key, signed by
    /// their master key: a stored key left from an identity reset elsewhere is not.
    public func isPublished(_ selfSigningKey: JSONValue?, masterKey: JSONValue?, userID: String) -> Bool {
        guard let master = masterKey.flatMap({ CrossSigning.key(of: $0, userID: userID, usage: "master") }),
            let published = selfSigningKey.flatMap({ CrossSigning.key(of: $0, userID: userID, usage: "self_signing") }),
            let object = selfSigningKey?.objectValue,
            published.id == "ed25519:\(publicKey)"
        else { return false }
        return DeviceIdentity.isSigned(object, by: master.key, userID: userID, keyID: master.id)
    }

    /// `deviceKeys` with this key's signature added: what `/keys/signatures/upload` takes for a
    /// device of `userID`. The signature covers the keys without `signatures` and `unsigned`.
    public func signed(_ deviceKeys: [String: JSONValue], userID: String) -> [String: JSONValue] {
        var covered = deviceKeys
        covered["signatures"] = nil
        covered["unsigned"] = nil
        guard let signature = try? key.signature(for: CanonicalJSON.encode(.object(covered))) else { return deviceKeys }
        // Only this signature goes up: the server merges it with those it holds, and signatures a
        // server listed are not Ferry's to repeat.
        covered["signatures"] = [userID: .object(["ed25519:\(publicKey)": .string(UnpaddedBase64.encode(signature))])]
        return covered
    }
}
