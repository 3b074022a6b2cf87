import FerryCore
import XCTest

/// The sign-in sentence counts the waiting shares, as far as they are counted.
final class SignInReasonTests: XCTestCase {
    func testOneShareIsSingular() {
        XCTAssertEqual(SignInReason.sentence(waiting: 1), "Sign in to send 1 waiting share.")
    }

    func testNoCountStillSpeaksOfTheShareThatArrived() {
        XCTAssertEqual(SignInReason.sentence(waiting: 0), "Sign in to send 1 waiting share.")
    }

    func testSeveralSharesAreCounted() {
        XCTAssertEqual(SignInReason.sentence(waiting: 37), "Sign in to send 37 waiting shares.")
        XCTAssertEqual(SignInReason.sentence(waiting: 999), "Sign in to send 999 waiting shares.")
    }

    func testACountThatReachedItsLimitSaysMoreThan() {
        XCTAssertEqual(
            SignInReason.sentence(waiting: SignInReason.countLimit), "Sign in to send more than 999 waiting shares.")
    }
}
