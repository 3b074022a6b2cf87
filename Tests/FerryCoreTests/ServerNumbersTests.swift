import FerryCore
import XCTest

/// Numbers from a server are clamped or refused before any arithmetic: none of them can trap.
final class ServerNumbersTests: XCTestCase {
    func testARetryDelayIsRoundedUpAndClampedToAnHour() {
        XCTAssertEqual(ServerNumbers.retryDelay(milliseconds: 1500), 1500)
        XCTAssertEqual(ServerNumbers.retryDelay(milliseconds: 0.2), 1)
        XCTAssertEqual(ServerNumbers.retryDelay(milliseconds: 1e30), 3_600_000)
        XCTAssertEqual(ServerNumbers.retryDelay(milliseconds: Double(Int64.max)), 3_600_000)
    }

    func testANegativeOrNonFiniteRetryDelayAsksForNothing() {
        XCTAssertNil(ServerNumbers.retryDelay(milliseconds: -5))
        XCTAssertNil(ServerNumbers.retryDelay(milliseconds: .nan))
        XCTAssertNil(ServerNumbers.retryDelay(milliseconds: .infinity))
    }

    func testRetryAfterSecondsAreDigitsOnly() {
        XCTAssertEqual(ServerNumbers.retryDelay(seconds: "3"), 3000)
        XCTAssertEqual(ServerNumbers.retryDelay(seconds: " 2.5 "), 2500)
        XCTAssertEqual(ServerNumbers.retryDelay(seconds: "99999999999999999999999"), 3_600_000)
        for text in ["-5", "1e9", "0x10", "5 seconds", "", ".", "1.2.3", "٣"] {
            XCTAssertNil(ServerNumbers.retryDelay(seconds: text), text)
        }
    }

    func testSizesAreWholeAndNotNegative() {
        XCTAssertEqual(ServerNumbers.byteCount(65536), 65536)
        XCTAssertEqual(ServerNumbers.byteCount(1e30), .max)
        XCTAssertNil(ServerNumbers.byteCount(-1))
        XCTAssertNil(ServerNumbers.byteCount(1.5))
        XCTAssertNil(ServerNumbers.byteCount(.nan))
    }

    func testConversionsSaturateInsteadOfTrapping() {
        XCTAssertEqual(ServerNumbers.microseconds(milliseconds: 7), 7000)
        XCTAssertEqual(ServerNumbers.microseconds(milliseconds: .max), .max)
        XCTAssertEqual(ServerNumbers.microseconds(milliseconds: .min), .min)
        XCTAssertEqual(ServerNumbers.difference(.max, -1), .max)
        XCTAssertEqual(ServerNumbers.difference(.min, 1), .min)
        XCTAssertEqual(ServerNumbers.difference(10, 3), 7)
        XCTAssertEqual(ServerNumbers.sum(.max, 1), .max)
        XCTAssertEqual(ServerNumbers.sum(.min, -1), .min)
    }

    func testABackoffIsNeverNegativeAndNeverBeyondAnHourWhateverTheServerAsks() {
        let backoff = Backoff(initial: 1_000_000, maximum: 60_000_000)
        XCTAssertEqual(backoff.delay(attempt: 1, retryAfterMilliseconds: .max, jitter: 0.5), Backoff.longest)
        XCTAssertEqual(backoff.delay(attempt: 1, retryAfterMilliseconds: 7_200_000, jitter: 0.5), 3_600_000_000)
        XCTAssertEqual(backoff.delay(attempt: 1, retryAfterMilliseconds: .min, jitter: 0.5), 1_000_000)
        XCTAssertEqual(backoff.delay(attempt: .max, jitter: .nan), 45_000_000)
        XCTAssertEqual(backoff.delay(attempt: .min, jitter: 1), 1_250_000)
        let huge = Backoff(initial: .max / 2, maximum: .max)
        XCTAssertEqual(huge.delay(attempt: 40, jitter: 1), Backoff.longest)
    }
}
