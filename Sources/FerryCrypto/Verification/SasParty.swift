/// One side of a verification as the other sees it: the user, the device, and the keys whose MACs
/// are exchanged. For us, the keys we vouch for; for them, the keys we hold for them (from a
/// checked `/keys/query`), which their MACs must match.
public struct SasParty: Sendable, Hashable {
    /// The Matrix user id.
    public let userID: String
    /// The device id.
    public let deviceID: String
    /// The device's Ed25519 key, base64: the key a SAS verifies.
    public let ed25519: String
    /// The user's cross-signing master key, base64, or nil. Ours: sent only when Ferry trusts it
    /// (a MAC over it says "I vouch for this identity"). Theirs: checked when their MAC covers it.
    public let masterKey: String?

    /// A side of the verification: whose device, its Ed25519 key, and the master key it vouches for.
    public init(userID: String, deviceID: String, ed25519: String, masterKey: String? = nil) {
        self.userID = userID
        self.deviceID = deviceID
        self.ed25519 = ed25519
        self.masterKey = masterKey
    }

    /// Another device from its checked device keys.
    public init(_ device: DeviceIdentity, masterKey: String? = nil) {
        self.init(userID: device.userID, deviceID: device.deviceID, ed25519: device.ed25519, masterKey: masterKey)
    }

    /// The key id of the device key in a MAC message: `ed25519:<device id>`.
    var deviceKeyID: String { "ed25519:\(deviceID)" }
    /// The key id of the master key in a MAC message: `ed25519:<the key itself>`, as cross-signing
    /// keys are named by their public key.
    var masterKeyID: String? { masterKey.map { "ed25519:\($0)" } }

    /// Whether the spec's tie-break gives this side's start precedence over `other`'s when both
    /// sent one: the smaller user id wins, and for the same user the smaller device id. Compared
    /// as UTF-8 bytes, as every other client compares them (Swift's `<` would normalise first).
    func precedes(_ other: SasParty) -> Bool {
        if !userID.utf8.elementsEqual(other.userID.utf8) {
            return userID.utf8.lexicographicallyPrecedes(other.userID.utf8)
        }
        return deviceID.utf8.lexicographicallyPrecedes(other.deviceID.utf8)
    }
}
