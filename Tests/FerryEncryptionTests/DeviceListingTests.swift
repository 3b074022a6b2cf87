import FerryCore
import FerryCrypto
import Logging
import Testing
@testable import FerryEncryption

/// Which devices of a `/keys/query` answer a room key may go to, from plain values: keys made and
/// signed by real FerryCrypto accounts, put together as a server would answer (or a server that
/// lies would).
@Suite struct DeviceListingTests {
    let ana = OlmAccount()
    let anaPhone = OlmAccount()
    let bob = OlmAccount()
    let me = OlmAccount()

    /// A cross-signing key of `user`: an account's Ed25519 key serves, being the same kind of key.
    struct CrossSigningKey {
        let key = OlmAccount()
        var id: String { "ed25519:" + key.ed25519 }

        func object(_ usage: String, of user: String) -> JSONValue {
            ["user_id": .string(user), "usage": [.string(usage)], "keys": .object([id: .string(key.ed25519)])]
        }

        /// `value` with this key's signature as `user`'s.
        func sign(_ value: JSONValue, as user: String) -> JSONValue {
            var members = value.objectValue!
            var covered = members
            covered["signatures"] = nil
            covered["unsigned"] = nil
            var signatures = members["signatures"]?.objectValue ?? [:]
            var mine = signatures[user]?.objectValue ?? [:]
            mine[id] = .string(key.sign(CanonicalJSON.encode(.object(covered))))
            signatures[user] = .object(mine)
            members["signatures"] = .object(signatures)
            return .object(members)
        }
    }

    static func answer(_ devices: [String: [String: JSONValue]], extra: [String: JSONValue] = [:]) -> JSONValue {
        var answer = extra
        answer["device_keys"] = .object(devices.mapValues { .object($0) })
        return .object(answer)
    }

    func listed(_ answer: JSONValue, of users: [String] = ["@ana:x", "@bob:x"]) -> KeySharing.Listed {
        KeySharing.Listed(answer, of: users, exceptUser: "@ana:x", device: "ME", logger: Logger(label: "test"))
    }

    @Test func theAskedUsersDevicesAreListedWithoutFerrysOwn() {
        let answer = Self.answer([
            "@ana:x": [
                "A1": ana.deviceKeys(userID: "@ana:x", deviceID: "A1"),
                "ME": me.deviceKeys(userID: "@ana:x", deviceID: "ME"),
            ],
            "@bob:x": ["B1": bob.deviceKeys(userID: "@bob:x", deviceID: "B1")],
            "@eve:x": ["E1": OlmAccount().deviceKeys(userID: "@eve:x", deviceID: "E1")],
        ])
        let listed = listed(answer)
        #expect(listed.devices.mapValues { Set($0.keys) } == ["@ana:x": ["A1"], "@bob:x": ["B1"]])
        #expect(listed.devices["@bob:x"]?["B1"]?.curve25519 == bob.curve25519)
        #expect(listed.verifiedByOwner.isEmpty && listed.masterKeys.isEmpty)
    }

    @Test func aDeviceWhoseKeysDoNotVerifyIsLeftOut() {
        // Ana's keys listed under another device id, and Bob's with a key swapped after signing.
        var swapped = bob.deviceKeys(userID: "@bob:x", deviceID: "B1").objectValue!
        swapped["keys"] = .object([
            "curve25519:B1": .string(OlmAccount().curve25519), "ed25519:B1": .string(bob.ed25519),
        ])
        let answer = Self.answer([
            "@ana:x": ["A9": ana.deviceKeys(userID: "@ana:x", deviceID: "A1")],
            "@bob:x": ["B1": .object(swapped), "B2": anaPhone.deviceKeys(userID: "@bob:x", deviceID: "B2")],
        ])
        #expect(listed(answer).devices.mapValues { Set($0.keys) } == ["@ana:x": [], "@bob:x": ["B2"]])
    }

    @Test func twoDevicesWithOneIdentityKeyAreBothLeftOut() {
        // Bob's device claims Ana's identity key under its own signature: whoever holds the Olm
        // session for that key would read what either is sent.
        let copied = bob.signed(
            [
                "user_id": "@bob:x", "device_id": "B1",
                "algorithms": ["m.olm.v1.curve25519-aes-sha2", "m.megolm.v1.aes-sha2"],
                "keys": .object(["curve25519:B1": .string(ana.curve25519), "ed25519:B1": .string(bob.ed25519)]),
            ], userID: "@bob:x", deviceID: "B1")
        let answer = Self.answer([
            "@ana:x": [
                "A1": ana.deviceKeys(userID: "@ana:x", deviceID: "A1"),
                "A2": anaPhone.deviceKeys(userID: "@ana:x", deviceID: "A2"),
            ],
            "@bob:x": ["B1": copied],
        ])
        #expect(listed(answer).devices.mapValues { Set($0.keys) } == ["@ana:x": ["A2"], "@bob:x": []])
    }

    @Test func aDeviceItsOwnerCrossSignedIsVerifiedUnderTheMasterKeyListed() {
        let master = CrossSigningKey(), selfSigning = CrossSigningKey()
        let answer = Self.answer(
            [
                "@bob:x": [
                    "B1": selfSigning.sign(bob.deviceKeys(userID: "@bob:x", deviceID: "B1"), as: "@bob:x"),
                    "B2": anaPhone.deviceKeys(userID: "@bob:x", deviceID: "B2"),
                ]
            ],
            extra: [
                "master_keys": ["@bob:x": master.object("master", of: "@bob:x")],
                "self_signing_keys": [
                    "@bob:x": master.sign(selfSigning.object("self_signing", of: "@bob:x"), as: "@bob:x")
                ],
            ])
        let listed = listed(answer)
        #expect(listed.verifiedByOwner == [bob.curve25519])
        #expect(listed.masterKeys == ["@bob:x": master.key.ed25519])
        // The same device under a self-signing key the master did not sign is not verified.
        let unsigned = Self.answer(
            answer["device_keys"]!.objectValue!.mapValues { $0.objectValue! },
            extra: [
                "master_keys": ["@bob:x": master.object("master", of: "@bob:x")],
                "self_signing_keys": ["@bob:x": selfSigning.object("self_signing", of: "@bob:x")],
            ])
        #expect(self.listed(unsigned).verifiedByOwner.isEmpty)
    }
}
