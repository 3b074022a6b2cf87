import FerryCore
@testable import FerryCrypto
import Testing

struct DeviceIdentityTests {
    @Test func ourOwnDeviceKeysVerifyAndAnyChangeBreaksThem() throws {
        let account = OlmAccount()
        let keys = account.deviceKeys(userID: "@a:x", deviceID: "A")
        let identity = try DeviceIdentity(verifying: keys, userID: "@a:x", deviceID: "A")
        #expect(identity.curve25519 == account.curve25519 && identity.ed25519 == account.ed25519)
        var members = try #require(keys.objectValue)
        members["algorithms"] = ["m.olm.v1.curve25519-aes-sha2"]
        #expect(throws: CryptoError.self) {
            try DeviceIdentity(verifying: .object(members), userID: "@a:x", deviceID: "A")
        }
        #expect(throws: CryptoError.self) { try DeviceIdentity(verifying: keys, userID: "@a:x", deviceID: "B") }
        #expect(throws: CryptoError.self) {
            try DeviceIdentity(verifying: "not an object", userID: "@a:x", deviceID: "A")
        }
        #expect(throws: CryptoError.self) { try DeviceIdentity(verifying: [:], userID: "@a:x", deviceID: "A") }
    }

    @Test func aClaimedKeyMustBeSignedByTheDevice() throws {
        var account = OlmAccount()
        account.generateOneTimeKeys(1)
        let identity = try DeviceIdentity(
            verifying: account.deviceKeys(userID: "@a:x", deviceID: "A"), userID: "@a:x", deviceID: "A")
        let signed = try #require(account.unpublishedKeys(userID: "@a:x", deviceID: "A").oneTimeKeys.values.first)
        #expect(try identity.verifiedOneTimeKey(signed) == signed["key"]?.stringValue)
        let byAnother = OlmAccount().signed(["key": signed["key"]!], userID: "@a:x", deviceID: "A")
        #expect(throws: CryptoError.self) { try identity.verifiedOneTimeKey(byAnother) }
        #expect(throws: CryptoError.self) { try identity.verifiedOneTimeKey(["key": signed["key"]!]) }
    }
}

struct OneTimeKeyPruningTests {
    @Test func theOldestKeysGoAndTheNewestStay() {
        var account = OlmAccount()
        account.generateOneTimeKeys(300)
        let newest = account.unpublishedKeys(userID: "@a:x", deviceID: "A").oneTimeKeys
        account.markKeysAsPublished()
        account.forgetOldestOneTimeKeys(keeping: 100)
        #expect(account.oneTimeKeys.count == 100)
        // Ids count up from 1: what is left is 201…300, the newest.
        let kept = account.oneTimeKeys.keys.compactMap { UnpaddedBase64.decode($0) }.map {
            $0.reduce(0) { $0 << 8 | Int($1) }
        }
        #expect(kept.min() == 201 && kept.max() == 300)
        #expect(newest.count == 300)
        account.forgetOldestOneTimeKeys(keeping: 500)
        #expect(account.oneTimeKeys.count == 100)
    }
}
