import Crypto
import FerryCrypto
import Testing
@testable import FerryEncryption

/// One field for a recovery key or a passphrase: what looks like a key is a key (so a typo in it
/// is reported as one), the rest is a passphrase.
struct VerificationSecretTests {
    let key = RecoveryKey(key: SymmetricKey(data: [UInt8](repeating: 42, count: 32))).encoded

    func isKey(_ text: String) -> Bool {
        if case .keyShaped = VerificationSecret.either(text) { return true }
        return false
    }

    @Test func aKeyIsAKeyHoweverItIsSpaced() {
        #expect(isKey(key))
        #expect(isKey(key.replacingOccurrences(of: " ", with: "")))
        #expect(isKey(" " + key + "\n"))
    }

    @Test func aMistypedKeyIsStillAKey() {
        #expect(isKey(String(key.dropLast()) + "x"))
        #expect(isKey(String(key.dropLast(4))))
    }

    @Test func sentencesAndShortWordsArePassphrases() {
        #expect(!isKey("correct horse battery staple"))
        #expect(!isKey("Es"))
        #expect(!isKey("Especially long passphrase, with punctuation and spaces in it!"))
        #expect(!isKey(""))
    }
}
