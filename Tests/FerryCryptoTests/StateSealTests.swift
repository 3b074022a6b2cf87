import FerryCrypto
import Testing

struct StateSealTests {
    @Test func aSealedAccountOpensUnderItsName() throws {
        let seal = StateSeal()
        let account = OlmAccount()
        let sealed = try seal.seal(account.state, as: "account")
        let reopened = try #require(StateSeal(keyBytes: seal.keyBytes))
        let state = try reopened.open(sealed, as: "account", type: OlmAccount.State.self)
        #expect(try OlmAccount(state: state).curve25519 == account.curve25519)
        // Nothing of the key is readable in the sealed bytes.
        #expect(!String(decoding: sealed, as: UTF8.self).contains("signingKey"))
    }

    @Test func anotherNameAnotherKeyOrAChangedByteDoesNotOpen() throws {
        let seal = StateSeal()
        let sealed = try seal.seal(OutboundGroupSession().state, as: "megolm:!a:x")
        #expect(throws: CryptoError.self) {
            try seal.open(sealed, as: "megolm:!b:x", type: OutboundGroupSession.State.self)
        }
        #expect(throws: CryptoError.self) {
            try StateSeal().open(sealed, as: "megolm:!a:x", type: OutboundGroupSession.State.self)
        }
        for position in [1, sealed.count / 2, sealed.count - 1] {
            var changed = sealed
            changed[position] ^= 1
            #expect(throws: CryptoError.self) {
                try seal.open(changed, as: "megolm:!a:x", type: OutboundGroupSession.State.self)
            }
        }
        #expect(throws: CryptoError.self) {
            try seal.open([], as: "megolm:!a:x", type: OutboundGroupSession.State.self)
        }
        #expect(throws: CryptoError.self) {
            try seal.open([1, 2, 3], as: "megolm:!a:x", type: OutboundGroupSession.State.self)
        }
        #expect(StateSeal(keyBytes: [1, 2, 3]) == nil)
    }

    @Test func everySealIsFresh() throws {
        let seal = StateSeal()
        let state = OutboundGroupSession().state
        #expect(try seal.seal(state, as: "x") != seal.seal(state, as: "x"))
    }
}
