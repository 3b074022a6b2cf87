import FerryOutbox
import Logging
import XCTest

/// `Logger.attempt`, with which the sender and the service go on after an outbox call fails: the
/// failure is logged with what was being done, never dropped; a success is returned and logs nothing.
final class AttemptTests: XCTestCase {
    struct Refused: Error, CustomStringConvertible {
        var description: String { "disk I/O error" }
    }

    func testAFailureIsLoggedWithWhatFailedTheShareAndTheErrorAndAnswersNil() {
        let answer: Int? = TestLog.logger.attempt("recording an upload", share: "01kshare") { throw Refused() }

        XCTAssertNil(answer)
        XCTAssertEqual(TestLog.lines, ["error test: error=disk I/O error share=01kshare recording an upload failed"])
    }

    func testASuccessIsReturnedAndLogsNothing() {
        XCTAssertEqual(TestLog.logger.attempt("reading the queue") { 42 }, 42)
        XCTAssertNil(TestLog.logger.attempt("reading a share") { () throws -> String? in nil })
        XCTAssertEqual(TestLog.lines, [])
    }
}
