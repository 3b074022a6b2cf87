import FerryCore
import Crypto
import Foundation

/// Ferry's device identity: an Ed25519 key that signs, a Curve25519 key that agrees, and the
/// one-time and fallback Curve25519 keys others claim to start an Olm session with it.
///
/// A value, like the sessions: the caller keeps `state` durably after each change (a key made,
/// published or used), inside Ferry's encrypted store.
public struct OlmAccount: Sendable {
    /// The device's Ed25519 key (`ed25519:<device>` in its device keys).
    let signingKey: Curve25519.Signing.PrivateKey
    /// The device's Curve25519 identity key (`curve25519:<device>`), Olm's `I`.
    let identityKey: Curve25519.KeyAgreement.PrivateKey
    /// One-time keys by key id, until a pre-key message uses one.
    var oneTimeKeys: [String: Curve25519.KeyAgreement.PrivateKey] = [:]
    /// The ids of one-time keys not uploaded yet.
    var unpublished: Set<String> = []
    /// The current fallback key, and whether it is uploaded; the previous one is kept until the
    /// next is published, for pre-key messages on their way.
    var fallback: (id: String, key: Curve25519.KeyAgreement.PrivateKey, published: Bool)?
    var previousFallback: (id: String, key: Curve25519.KeyAgreement.PrivateKey)?
    /// The counter key ids come from, so an id is never reused.
    var nextKeyID: UInt32 = 1

    /// A new device identity from the system's random generator.
    public init() {
        self.init(signingKey: Curve25519.Signing.PrivateKey(), identityKey: Curve25519.KeyAgreement.PrivateKey())
    }

    init(signingKey: Curve25519.Signing.PrivateKey, identityKey: Curve25519.KeyAgreement.PrivateKey) {
        self.signingKey = signingKey
        self.identityKey = identityKey
    }

    /// The Ed25519 public key, base64: the device's fingerprint.
    public var ed25519: String { UnpaddedBase64.encode(signingKey.publicKey.rawRepresentation) }
    /// The Curve25519 identity key, base64: the `sender_key` of everything it encrypts.
    public var curve25519: String { UnpaddedBase64.encode(identityKey.publicKey.rawRepresentation) }

    /// The Ed25519 signature of `bytes`, base64.
    public func sign(_ bytes: [UInt8]) -> String {
        UnpaddedBase64.encode(try! signingKey.signature(for: bytes))
    }

    /// `object` with this device's signature added under `signatures.<userID>.ed25519:<deviceID>`:
    /// the signature covers the canonical JSON of the object without `signatures` and `unsigned`,
    /// and signatures already there are kept.
    public func signed(_ object: [String: JSONValue], userID: String, deviceID: String) -> JSONValue {
        var covered = object
        let existing = covered.removeValue(forKey: "signatures")?.objectValue ?? [:]
        let unsigned = covered.removeValue(forKey: "unsigned")
        let signature = sign(CanonicalJSON.encode(.object(covered)))
        var mine = existing[userID]?.objectValue ?? [:]
        mine["ed25519:\(deviceID)"] = .string(signature)
        var signatures = existing
        signatures[userID] = .object(mine)
        var result = covered
        result["signatures"] = .object(signatures)
        if let unsigned { result["unsigned"] = unsigned }
        return .object(result)
    }

    /// The device keys for `/keys/upload`, signed by the device.
    public func deviceKeys(userID: String, deviceID: String) -> JSONValue {
        signed(
            [
                "user_id": .string(userID), "device_id": .string(deviceID),
                "algorithms": ["m.olm.v1.curve25519-aes-sha2", "m.megolm.v1.aes-sha2"],
                "keys": .object([
                    "curve25519:\(deviceID)": .string(curve25519), "ed25519:\(deviceID)": .string(ed25519),
                ]),
            ], userID: userID, deviceID: deviceID)
    }

    /// Makes `count` new one-time keys, to be uploaded.
    public mutating func generateOneTimeKeys(_ count: Int) {
        for _ in 0..<max(0, count) {
            let id = takeKeyID()
            oneTimeKeys[id] = Curve25519.KeyAgreement.PrivateKey()
            unpublished.insert(id)
        }
    }

    /// Makes a new fallback key, keeping the current one as the previous until it is published.
    public mutating func generateFallbackKey() {
        if let fallback { previousFallback = (fallback.id, fallback.key) }
        fallback = (takeKeyID(), Curve25519.KeyAgreement.PrivateKey(), false)
    }

    /// The keys not uploaded yet, each signed, keyed as `/keys/upload` wants them
    /// (`signed_curve25519:<id>` in `one_time_keys` and in `fallback_keys`).
    public func unpublishedKeys(
        userID: String, deviceID: String
    ) -> (oneTimeKeys: [String: JSONValue], fallbackKeys: [String: JSONValue]) {
        var oneTime: [String: JSONValue] = [:]
        for id in unpublished {
            guard let key = oneTimeKeys[id] else { continue }
            oneTime["signed_curve25519:\(id)"] = signed(
                ["key": .string(UnpaddedBase64.encode(key.publicKey.rawRepresentation))],
                userID: userID, deviceID: deviceID)
        }
        var fallbackKeys: [String: JSONValue] = [:]
        if let fallback, !fallback.published {
            fallbackKeys["signed_curve25519:\(fallback.id)"] = signed(
                ["key": .string(UnpaddedBase64.encode(fallback.key.publicKey.rawRepresentation)), "fallback": true],
                userID: userID, deviceID: deviceID)
        }
        return (oneTime, fallbackKeys)
    }

    /// Notes that everything `unpublishedKeys` returned is on the server.
    public mutating func markKeysAsPublished() {
        unpublished.removeAll()
        if let current = fallback, !current.published {
            fallback = (current.id, current.key, true)
        }
    }

    /// Forgets the oldest one-time keys beyond the newest `count` (by key id, which only grows):
    /// a device that never receives the pre-key messages its keys were claimed for would
    /// otherwise keep every key it ever made.
    public mutating func forgetOldestOneTimeKeys(keeping count: Int) {
        guard oneTimeKeys.count > count else { return }
        let byAge = oneTimeKeys.keys.sorted {
            (UnpaddedBase64.decode($0) ?? []).lexicographicallyPrecedes(UnpaddedBase64.decode($1) ?? [])
        }
        for id in byAge.prefix(oneTimeKeys.count - max(0, count)) {
            oneTimeKeys[id] = nil
            unpublished.remove(id)
        }
    }

    /// The one-time keys the server should hold: uploaded and not used yet.
    public var publishedOneTimeKeyCount: Int { oneTimeKeys.count - unpublished.count }

    /// The private half of one of our keys named in a pre-key message, removing a one-time key
    /// (a fallback key stays until replaced); nil if we do not hold it.
    mutating func takeKey(public publicKey: [UInt8]) -> Curve25519.KeyAgreement.PrivateKey? {
        if let (id, key) = oneTimeKeys.first(where: { $0.value.publicKey.rawRepresentation == Data(publicKey) }) {
            oneTimeKeys[id] = nil
            unpublished.remove(id)
            return key
        }
        for key in [fallback?.key, previousFallback?.key].compactMap({ $0 })
        where key.publicKey.rawRepresentation == Data(publicKey) {
            return key
        }
        return nil
    }

    private mutating func takeKeyID() -> String {
        defer { nextKeyID += 1 }
        return UnpaddedBase64.encode(withUnsafeBytes(of: nextKeyID.bigEndian) { Array($0) })
    }
}
