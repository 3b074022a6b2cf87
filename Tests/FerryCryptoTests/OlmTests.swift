import FerryCore
@testable import FerryCrypto
import Foundation
import Testing

/// A device with one published one-time key, and that key as another device claims it.
func deviceWithOneTimeKey() throws -> (account: OlmAccount, oneTimeKey: String) {
    var account = OlmAccount()
    account.generateOneTimeKeys(1)
    let key = try #require(
        account.unpublishedKeys(userID: "@b:x", deviceID: "B").oneTimeKeys.values.first?["key"]?.stringValue)
    account.markKeysAsPublished()
    return (account, key)
}

/// Alice started a session with Bob and Bob read her first message.
func pair() throws -> (alice: OlmSession, bob: OlmSession, bobAccount: OlmAccount, aliceAccount: OlmAccount) {
    let aliceAccount = OlmAccount()
    var (bobAccount, oneTime) = try deviceWithOneTimeKey()
    var alice = try OlmSession.outbound(
        from: aliceAccount, theirIdentityKey: bobAccount.curve25519, theirOneTimeKey: oneTime)
    let first = try alice.encrypt(Array("hi".utf8))
    let (bob, _) = try OlmSession.inbound(
        to: &bobAccount, theirIdentityKey: aliceAccount.curve25519, preKeyMessage: first.body)
    return (alice, bob, bobAccount, aliceAccount)
}

/// Olm's rules on plain values. Interoperability is proven against libolm and vodozemac in
/// Tests/integration/encryption/test_crypto_interop.py; these check the refusals and the bounds.
struct OlmTests {
    @Test func oneTimeKeyIsUsedOnceAndFallbackKeyStays() throws {
        var (_, _, bobAccount, _) = try pair()
        #expect(bobAccount.publishedOneTimeKeyCount == 0)
        bobAccount.generateFallbackKey()
        let fallback = try #require(bobAccount.unpublishedKeys(userID: "@b:x", deviceID: "B").fallbackKeys.values.first)
        #expect(fallback["fallback"] == true)
        bobAccount.markKeysAsPublished()
        #expect(bobAccount.unpublishedKeys(userID: "@b:x", deviceID: "B").fallbackKeys.isEmpty)
        let key = try #require(fallback["key"]?.stringValue)
        for sender in [OlmAccount(), OlmAccount()] {
            var session = try OlmSession.outbound(
                from: sender, theirIdentityKey: bobAccount.curve25519, theirOneTimeKey: key)
            let message = try session.encrypt([42])
            #expect(
                try OlmSession.inbound(
                    to: &bobAccount, theirIdentityKey: sender.curve25519, preKeyMessage: message.body
                ).plaintext == [42])
        }
    }

    @Test func aPreKeyMessageClaimingAnotherSenderIsRefused() throws {
        let aliceAccount = OlmAccount()
        var (bobAccount, oneTime) = try deviceWithOneTimeKey()
        var alice = try OlmSession.outbound(
            from: aliceAccount, theirIdentityKey: bobAccount.curve25519, theirOneTimeKey: oneTime)
        let message = try alice.encrypt([1])
        #expect(throws: CryptoError.self) {
            try OlmSession.inbound(
                to: &bobAccount, theirIdentityKey: OlmAccount().curve25519, preKeyMessage: message.body)
        }
        // The refusal used nothing up: the genuine sender still gets through.
        #expect(
            try OlmSession.inbound(
                to: &bobAccount, theirIdentityKey: aliceAccount.curve25519, preKeyMessage: message.body
            ).plaintext == [1])
    }

    @Test func aMessageTooFarAheadIsRefusedAndChangesNothing() throws {
        var (alice, bob, _, _) = try pair()
        var skipped: [(type: Int, body: String)] = []
        for _ in 0...OlmSession.maxGap + 1 { skipped.append(try alice.encrypt([0])) }
        let last = try #require(skipped.last)
        #expect(throws: CryptoError.self) { try bob.decrypt(type: last.type, body: last.body) }
        #expect(try bob.decrypt(type: skipped[0].type, body: skipped[0].body) == [0])
    }

    @Test func unknownTypesAndGarbageAreRefused() throws {
        var (_, bob, _, _) = try pair()
        #expect(throws: CryptoError.unsupported("Olm message type 2")) { try bob.decrypt(type: 2, body: "AAAA") }
        #expect(throws: CryptoError.self) { try bob.decrypt(type: 1, body: "%%%") }
        #expect(throws: CryptoError.self) { try bob.decrypt(type: 1, body: "AwoA") }
        #expect(throws: CryptoError.self) {
            try bob.decrypt(type: 0, body: UnpaddedBase64.encode([3, 0x0A, 32] + [UInt8](repeating: 0, count: 32)))
        }
    }

    @Test func aLowOrderKeyIsRefused() {
        let zeros = UnpaddedBase64.encode([UInt8](repeating: 0, count: 32))
        #expect(throws: CryptoError.self) {
            try OlmSession.outbound(from: OlmAccount(), theirIdentityKey: zeros, theirOneTimeKey: zeros)
        }
    }

    @Test func signedObjectsKeepOtherSignaturesAndUnsigned() {
        let account = OlmAccount()
        let object: [String: JSONValue] = [
            "key": "abc", "unsigned": ["note": "x"],
            "signatures": ["@other:x": ["ed25519:O": "sig"]],
        ]
        let signed = account.signed(object, userID: "@me:x", deviceID: "D")
        #expect(signed["signatures"]?["@other:x"]?["ed25519:O"] == "sig")
        #expect(
            signed["signatures"]?["@me:x"]?["ed25519:D"]?.stringValue == account.sign(Array(#"{"key":"abc"}"#.utf8)))
        #expect(signed["unsigned"] == ["note": "x"])
    }
}

/// A kept state brings back exactly the account or session it was taken from.
struct OlmStateTests {
    @Test func anAccountComesBackWithItsKeysAndCounters() throws {
        var account = OlmAccount()
        account.generateOneTimeKeys(3)
        account.markKeysAsPublished()
        account.generateOneTimeKeys(2)
        account.generateFallbackKey()
        let kept = try JSONDecoder().decode(OlmAccount.State.self, from: JSONEncoder().encode(account.state))
        var restored = try OlmAccount(state: kept)
        #expect(restored.state == account.state)
        #expect(restored.curve25519 == account.curve25519 && restored.ed25519 == account.ed25519)
        #expect(restored.publishedOneTimeKeyCount == 3)
        let before = Set(account.unpublishedKeys(userID: "@a:x", deviceID: "A").oneTimeKeys.keys)
        #expect(Set(restored.unpublishedKeys(userID: "@a:x", deviceID: "A").oneTimeKeys.keys) == before)
        restored.generateOneTimeKeys(1)
        #expect(!before.contains(restored.state.oneTimeKeys.last!.id), "a key id is never given twice")
    }

    @Test func aSessionComesBackMidConversation() throws {
        var (alice, bob, _, _) = try pair()
        let late = try alice.encrypt([2])
        let reply = try bob.encrypt([3])
        var keptAlice = try OlmSession(
            state: JSONDecoder().decode(OlmSession.State.self, from: JSONEncoder().encode(alice.state)))
        var keptBob = try OlmSession(state: bob.state)
        #expect(try keptAlice.decrypt(type: reply.type, body: reply.body) == [3])
        #expect(try keptBob.decrypt(type: late.type, body: late.body) == [2])
        let next = try keptAlice.encrypt([4])
        #expect(next.type == 1)
        #expect(try keptBob.decrypt(type: next.type, body: next.body) == [4])
    }
}
