import Crypto
import FerryCore
import Testing
@testable import FerryCrypto

/// "Verified by its owner": a device's keys signed by the owner's self-signing key, that key
/// signed by the master key; every link checked, each broken one a no.
struct CrossSigningTests {
    let user = "@ana:x"
    let master = Curve25519.Signing.PrivateKey()
    let selfSigning = Curve25519.Signing.PrivateKey()
    let device = OlmAccount()

    static func id(_ key: Curve25519.Signing.PrivateKey) -> String {
        "ed25519:" + UnpaddedBase64.encode(key.publicKey.rawRepresentation)
    }

    func keyObject(_ key: Curve25519.Signing.PrivateKey, usage: String, user: String? = nil) -> JSONValue {
        let text = UnpaddedBase64.encode(key.publicKey.rawRepresentation)
        return [
            "user_id": .string(user ?? self.user), "usage": [.string(usage)],
            "keys": .object([Self.id(key): .string(text)]),
        ]
    }

    func sign(_ value: JSONValue, with key: Curve25519.Signing.PrivateKey) -> JSONValue {
        var members = value.objectValue!
        var covered = members
        covered["signatures"] = nil
        let signature = UnpaddedBase64.encode(try! key.signature(for: CanonicalJSON.encode(.object(covered))))
        var signatures = members["signatures"]?.objectValue ?? [:]
        var mine = signatures[user]?.objectValue ?? [:]
        mine[Self.id(key)] = .string(signature)
        signatures[user] = .object(mine)
        members["signatures"] = .object(signatures)
        return .object(members)
    }

    func check(
        deviceKeys: JSONValue? = nil, master masterObject: JSONValue? = nil, selfSigning selfObject: JSONValue? = nil
    ) throws -> Bool {
        let keys = deviceKeys ?? sign(device.deviceKeys(userID: user, deviceID: "D"), with: selfSigning)
        let identity = try DeviceIdentity(
            verifying: device.deviceKeys(userID: user, deviceID: "D"), userID: user, deviceID: "D")
        return CrossSigning.isVerifiedByOwner(
            keys, of: identity,
            masterKey: masterObject ?? keyObject(master, usage: "master"),
            selfSigningKey: selfObject ?? sign(keyObject(selfSigning, usage: "self_signing"), with: master))
    }

    @Test func aDeviceSignedThroughTheChainIsVerified() throws {
        #expect(try check())
    }

    @Test func anyBrokenLinkIsNotVerified() throws {
        // The device keys without the self-signing signature
        #expect(try !check(deviceKeys: device.deviceKeys(userID: user, deviceID: "D")))
        // A self-signing key the master key did not sign
        #expect(try !check(selfSigning: keyObject(selfSigning, usage: "self_signing")))
        // A self-signing key signed by another key than the master
        #expect(
            try !check(
                selfSigning: sign(keyObject(selfSigning, usage: "self_signing"), with: Curve25519.Signing.PrivateKey()))
        )
        // Keys made for another usage, or another user
        #expect(try !check(master: keyObject(master, usage: "user_signing")))
        #expect(try !check(selfSigning: sign(keyObject(selfSigning, usage: "user_signing"), with: master)))
        #expect(try !check(master: keyObject(master, usage: "master", user: "@eve:x")))
        // Missing keys
        let identity = try DeviceIdentity(
            verifying: device.deviceKeys(userID: user, deviceID: "D"), userID: user, deviceID: "D")
        #expect(
            !CrossSigning.isVerifiedByOwner(
                device.deviceKeys(userID: user, deviceID: "D"), of: identity, masterKey: nil, selfSigningKey: nil))
        // A signed object whose device key is another than the identity's
        let other = sign(OlmAccount().deviceKeys(userID: user, deviceID: "D"), with: selfSigning)
        #expect(try !check(deviceKeys: other))
    }
}
