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
    public static func isVerifiedByOwner(_ deviceKeys: JSONValue, of device: DeviceIdentity,
                                         masterKey: JSONValue?, selfSigningKey: JSONValue?) -> Bool {
        guard let master = masterKey.flatMap({ key(of: $0, userID: device.userID, usage: "master") }),
              let selfSigning = selfSigningKey.flatMap({ key(of: $0, userID: device.userID, usage: "self_signing") }),
              let selfSigningObject = selfSigningKey?.objectValue,
              DeviceIdentity.isSigned(selfSigningObject, by: master.key, userID: device.userID, keyID: master.id),
              let keys = deviceKeys.objectValue,
              keys["keys"]?["ed25519:\(device.deviceID)"]?.stringValue == device.ed25519 else { return false }
        return DeviceIdentity.isSigned(keys, by: selfSigning.key, userID: device.userID, keyID: selfSigning.id)
    }

    /// The user's master key (its base64 Ed25519 key) from their `master_keys` entry, when it is
    /// a well-formed master key of theirs: what a client pins on first sight.
    public static func masterKey(_ object: JSONValue?, userID: String) -> String? {
        guard let object, let (id, _) = key(of: object, userID: userID, usage: "master") else { return nil }
        return String(id.dropFirst("ed25519:".count))
    }

    /// The one Ed25519 key of a cross-signing key object of `userID` with `usage`.
    static func key(of object: JSONValue, userID: String, usage: String) -> (id: String, key: Curve25519.Signing.PublicKey)? {
        guard object["user_id"]?.stringValue == userID,
              case .array(let usages)? = object["usage"], usages.contains(.string(usage)),
              let keys = object["keys"]?.objectValue, keys.count == 1, let (id, value) = keys.first,
              let text = value.stringValue, id == "ed25519:\(text)",
              let bytes = UnpaddedBase64.decode(text), let key = try? Curve25519.Signing.PublicKey(rawRepresentation: bytes) else {
            return nil
        }
        return (id, key)
    }
}
