import Crypto
import FerryCore

/// A cross-signing identity made by Ferry for an account that has none: the master key, which
/// signs the self-signing key (for the owner's devices) and the user-signing key (for other
/// people). Its private keys go into secret storage and nowhere else; the object is dropped
/// once they are stored and the public halves uploaded.
public struct NewCrossSigningIdentity: Sendable {
    /// The account the identity is for.
    public let userID: String
    private let master = Curve25519.Signing.PrivateKey()
    private let selfSigning = Curve25519.Signing.PrivateKey()
    private let userSigning = Curve25519.Signing.PrivateKey()

    /// Fresh keys for `userID`'s identity.
    public init(userID: String) { self.userID = userID }

    /// The master key, base64: what the person's other clients will pin.
    public var masterKey: String { Self.base64(master.publicKey) }

    /// `/keys/device_signing/upload`'s body: the three key objects, the other two signed by the master.
    public func uploadBody() -> [String: JSONValue] {
        [
            "master_key": keyObject(master, usage: "master"),
            "self_signing_key": signedByMaster(keyObject(selfSigning, usage: "self_signing")),
            "user_signing_key": signedByMaster(keyObject(userSigning, usage: "user_signing")),
        ]
    }

    /// The secrets to store, by their secret storage names (the unpadded base64 Ed25519 seeds).
    public func secrets() -> [(name: String, value: String)] {
        [
            ("m.cross_signing.master", UnpaddedBase64.encode(master.rawRepresentation)),
            ("m.cross_signing.self_signing", UnpaddedBase64.encode(selfSigning.rawRepresentation)),
            ("m.cross_signing.user_signing", UnpaddedBase64.encode(userSigning.rawRepresentation)),
        ]
    }

    /// The self-signing key, to sign Ferry's own device with.
    public func selfSigningKey() throws(CryptoError) -> SelfSigningKey {
        try SelfSigningKey(secret: UnpaddedBase64.encode(selfSigning.rawRepresentation))
    }

    private func keyObject(_ key: Curve25519.Signing.PrivateKey, usage: String) -> JSONValue {
        let text = Self.base64(key.publicKey)
        return [
            "user_id": .string(userID), "usage": [.string(usage)], "keys": .object(["ed25519:\(text)": .string(text)]),
        ]
    }

    private func signedByMaster(_ value: JSONValue) -> JSONValue {
        guard var object = value.objectValue,
            let signature = try? master.signature(for: CanonicalJSON.encode(value))
        else { return value }
        object["signatures"] = [userID: .object(["ed25519:\(masterKey)": .string(UnpaddedBase64.encode(signature))])]
        return .object(object)
    }

    private static func base64(_ key: Curve25519.Signing.PublicKey) -> String {
        UnpaddedBase64.encode(key.rawRepresentation)
    }
}
