import FerryCore
import Crypto

/// Another device as its signed device keys describe it, once their self-signature has been
/// checked: the only form in which Ferry lets a device receive a room key.
public struct DeviceIdentity: Sendable, Hashable {
    /// The device's owner.
    public let userID: String
    /// The device's id.
    public let deviceID: String
    /// Its Curve25519 identity key, base64: the Olm session's other side.
    public let curve25519: String
    /// Its Ed25519 key, base64: its fingerprint, what verification compares.
    public let ed25519: String

    /// The device that `keys` (one entry of `/keys/query`'s `device_keys.<user>.<device>`)
    /// describes, when it is listed under the user and device it names, has both keys, and carries
    /// its own Ed25519 signature over its canonical JSON. A server cannot hand Ferry a key of its
    /// own making for someone else's device: it would need the device's signing key.
    public init(verifying keys: JSONValue, userID: String, deviceID: String) throws(CryptoError) {
        guard let object = keys.objectValue else { throw .malformed("device keys that are not an object") }
        guard object["user_id"]?.stringValue == userID, object["device_id"]?.stringValue == deviceID else {
            throw .authenticationFailed("device keys listed under \(userID) \(deviceID) name another device")
        }
        guard let curve = object["keys"]?["curve25519:\(deviceID)"]?.stringValue,
            let ed = object["keys"]?["ed25519:\(deviceID)"]?.stringValue,
            let edBytes = UnpaddedBase64.decode(ed),
            let signingKey = try? Curve25519.Signing.PublicKey(rawRepresentation: edBytes),
            let curveBytes = UnpaddedBase64.decode(curve), curveBytes.count == 32
        else {
            throw .malformed("device keys without a usable Curve25519 and Ed25519 key")
        }
        guard Self.isSigned(object, by: signingKey, userID: userID, deviceID: deviceID) else {
            throw .authenticationFailed("the device keys of \(userID) \(deviceID) are not signed by that device")
        }
        self.userID = userID
        self.deviceID = deviceID
        curve25519 = curve
        ed25519 = ed
    }

    /// Checks a one-time or fallback key claimed for this device (`signed_curve25519`): it must
    /// carry this device's signature. Returns the key, base64.
    public func verifiedOneTimeKey(_ signed: JSONValue) throws(CryptoError) -> String {
        guard let object = signed.objectValue, let key = object["key"]?.stringValue,
            let signingKey = try? Curve25519.Signing.PublicKey(rawRepresentation: UnpaddedBase64.decode(ed25519) ?? []),
            Self.isSigned(object, by: signingKey, userID: userID, deviceID: deviceID)
        else {
            throw .authenticationFailed("a one-time key of \(userID) \(deviceID) not signed by that device")
        }
        return key
    }

    /// Whether `object` carries `userID`'s `ed25519:<deviceID>` signature by `key` over its
    /// canonical JSON without `signatures` and `unsigned` (the Matrix rule for signed JSON).
    static func isSigned(
        _ object: [String: JSONValue], by key: Curve25519.Signing.PublicKey, userID: String, deviceID: String
    ) -> Bool {
        isSigned(object, by: key, userID: userID, keyID: "ed25519:\(deviceID)")
    }

    /// The same for any key id (a cross-signing key's is `ed25519:<its public key>`).
    static func isSigned(
        _ object: [String: JSONValue], by key: Curve25519.Signing.PublicKey, userID: String, keyID: String
    ) -> Bool {
        guard let signature = object["signatures"]?[userID]?[keyID]?.stringValue,
            let signatureBytes = UnpaddedBase64.decode(signature)
        else { return false }
        var covered = object
        covered["signatures"] = nil
        covered["unsigned"] = nil
        return key.isValidSignature(signatureBytes, for: CanonicalJSON.encode(.object(covered)))
    }
}
