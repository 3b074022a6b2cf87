import FerryCrypto
import Testing
@testable import FerryEncryption

/// What a person is told when an emoji verification ends: who ended it, and never the other
/// side's words as if they were Ferry's.
struct EmojiVerificationStateTests {
    @Test func eachSideOfACancelIsSaidAsItsOwn() {
        #expect(
            VerificationCancel(.mismatchedSas, "x").sentence(byUs: true).hasPrefix("You said the emoji do not match"))
        #expect(VerificationCancel(.mismatchedSas, "x").sentence(byUs: false).hasPrefix("Your other device says"))
        #expect(VerificationCancel(.user, "x").sentence(byUs: false).contains("cancelled on your other device"))
        #expect(VerificationCancel(.timeout, "x").sentence(byUs: true).contains("ten minutes"))
        #expect(VerificationCancel(.accepted, "x").sentence(byUs: false).contains("Another of your devices"))
    }

    @Test func keysThatDoNotCheckOutAreSaidSo() {
        for code in [VerificationCancel.Code.keyMismatch, .mismatchedCommitment] {
            #expect(VerificationCancel(code, "x").sentence(byUs: true).contains("not the ones the server lists"))
        }
    }

    @Test func aSpecShapedCodeIsNamedButTheirReasonIsNotRepeated() {
        let sentence = VerificationCancel(VerificationCancel.Code(rawValue: "m.unknown_method"), "CLICK HERE").sentence(
            byUs: false)
        #expect(sentence.contains("(m.unknown_method)") && !sentence.contains("CLICK HERE"))
    }

    @Test func anyOtherCodeIsNotShown() {
        for code in ["org.example.odd", "m.\u{1B}[2J", "m.CALL_555", "m." + String(repeating: "a", count: 80)] {
            let sentence = VerificationCancel(VerificationCancel.Code(rawValue: code), "").sentence(byUs: false)
            #expect(sentence.contains("(an unknown code)"), "\(code)")
        }
    }

    @Test func onlyDoneAndCancelledAreOver() {
        let over = [EmojiVerificationState.Stage.waiting, .comparing, .confirmed, .done, .cancelled]
            .filter { EmojiVerificationState(id: "v", stage: $0).isOver }
        #expect(over == [.done, .cancelled])
    }
}
