import Foundation
import XCTest
@testable import FerryMatrix

/// Retry-After's HTTP-date: exactly RFC 9110's IMF-fixdate, anything else nil.
final class HTTPDateTests: XCTestCase {
    func testTheSpecsExampleIsItsMoment() {
        XCTAssertEqual(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT"), Date(timeIntervalSince1970: 784_111_777))
        XCTAssertEqual(HTTPDate.parse("Tue, 29 Feb 2028 00:00:00 GMT"), Date(timeIntervalSince1970: 1_835_395_200))
    }

    func testTheObsoleteFormsAndNearMissesAreRefused() {
        for text in [
            "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994", "sun, 06 nov 1994 08:49:37 gmt",
            "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, +6 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 8:49:37 GMT",
            "Sun, 06 Nov 1994 24:00:00 GMT", "Sun,  6 Nov 1994 08:49:37 GMT", "", "120",
        ] {
            XCTAssertNil(HTTPDate.parse(text), text)
        }
    }

    func testADayThatDoesNotExistIsRefusedRatherThanRolledOver() {
        XCTAssertNil(HTTPDate.parse("Fri, 31 Feb 2026 12:00:00 GMT"))
        XCTAssertNil(HTTPDate.parse("Mon, 00 Jan 2026 12:00:00 GMT"))
        XCTAssertNil(HTTPDate.parse("Thu, 29 Feb 2026 12:00:00 GMT"))
    }

    func testWhatFuzzingFoundReadsAsNoDate() {
        // The input that made DateFormatter leak (build/fuzz/artifacts/retry-after), kept as found.
        let found = Data(
            base64Encoded: "/wEAAAD/LpCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJDykJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQCb0=")!
        XCTAssertNil(HTTPDate.parse(String(decoding: found, as: UTF8.self)))
        XCTAssertNil(MatrixHTTP.retryDelay(header: String(decoding: found, as: UTF8.self), now: Date()))
    }
}
