@testable import FerryMatrix
import Foundation
import NIOHTTP1
import XCTest

/// The transport's pure parts: what goes into paths, and how the server's errors are read.
final class MatrixHTTPTests: XCTestCase {
    func testRoomIDsAliasesAndTransactionIDsArePercentEncodedForPaths() {
        XCTAssertEqual(MatrixHTTP.percentEncoded("!abc:example.org"), "%21abc%3Aexample.org")
        XCTAssertEqual(MatrixHTTP.percentEncoded("#room:example.org"), "%23room%3Aexample.org")
        XCTAssertEqual(MatrixHTTP.percentEncoded("ferry.01abc.0.1"), "ferry.01abc.0.1")
        XCTAssertEqual(MatrixHTTP.percentEncoded("a b/ü"), "a%20b%2F%C3%BC")
    }

    func testARateLimitCarriesItsRetryAfter() {
        let body = Data(#"{"errcode":"M_LIMIT_EXCEEDED","error":"Too many","retry_after_ms":1500}"#.utf8)

        let error = MatrixHTTP.decodeError(status: 429, body: body, headers: [:])

        XCTAssertEqual(error.errcode, "M_LIMIT_EXCEEDED")
        XCTAssertEqual(error.retryAfterMilliseconds, 1500)
        XCTAssertTrue(error.isTransient)
    }

    func testARetryAfterHeaderInSecondsIsUnderstoodToo() {
        let error = MatrixHTTP.decodeError(status: 429, body: Data("{}".utf8), headers: ["Retry-After": "3"])
        XCTAssertEqual(error.retryAfterMilliseconds, 3000)
    }

    func testAnUnknownTokenMeansSigningInAgainSoftLogoutIncluded() {
        let soft = MatrixHTTP.decodeError(
            status: 401, body: Data(#"{"errcode":"M_UNKNOWN_TOKEN","error":"x","soft_logout":true}"#.utf8),
            headers: [:])
        XCTAssertTrue(soft.isUnknownToken)
        XCTAssertTrue(soft.softLogout)
        XCTAssertFalse(soft.isTransient)
    }

    func testServerErrorsAndTransportFailuresAreTransientRefusalsAreNot() {
        XCTAssertTrue(MatrixHTTP.decodeError(status: 502, body: Data(), headers: [:]).isTransient)
        XCTAssertTrue(MatrixError(kind: .transport, message: "refused").isTransient)
        XCTAssertFalse(MatrixHTTP.decodeError(status: 403, body: Data(), headers: [:]).isTransient)
        XCTAssertFalse(MatrixHTTP.decodeError(status: 413, body: Data(), headers: [:]).isTransient)
    }

    func testAnErrorWithoutAJSONBodyStillSaysItsStatus() {
        let error = MatrixHTTP.decodeError(status: 404, body: Data("<html>".utf8), headers: [:])
        XCTAssertEqual(error.status, 404)
        XCTAssertEqual(error.message, "HTTP 404")
    }

    func testQueriesAreEncoded() {
        XCTAssertEqual(MatrixHTTP.queryString([("filename", "a b.png"), ("dir", "b")]), "?filename=a%20b.png&dir=b")
        XCTAssertEqual(MatrixHTTP.queryString([]), "")
    }

    func testAHostileRetryAfterIsClampedToAnHourAndKeepsTheErrorCode() {
        for value in ["9223372036854775807", "1e30", "18446744073709551616000"] {
            let body = Data(#"{"errcode":"M_LIMIT_EXCEEDED","error":"slow down","retry_after_ms":\#(value)}"#.utf8)
            let error = MatrixHTTP.decodeError(status: 429, body: body, headers: [:])
            XCTAssertEqual(error.errcode, "M_LIMIT_EXCEEDED", value)
            XCTAssertEqual(error.retryAfterMilliseconds, 3_600_000, value)
        }
        let header = MatrixHTTP.decodeError(status: 429, body: Data(), headers: ["Retry-After": "9223372036854775807"])
        XCTAssertEqual(header.retryAfterMilliseconds, 3_600_000)
    }

    func testANegativeFractionalOrTextualRetryAfterFallsBackWithoutLosingTheError() {
        let negative = MatrixHTTP.decodeError(
            status: 429, body: Data(#"{"errcode":"M_LIMIT_EXCEEDED","retry_after_ms":-5}"#.utf8),
            headers: ["Retry-After": "-5"])
        XCTAssertEqual(negative.errcode, "M_LIMIT_EXCEEDED")
        XCTAssertNil(negative.retryAfterMilliseconds)
        let text = MatrixHTTP.decodeError(
            status: 429, body: Data(#"{"errcode":"M_LIMIT_EXCEEDED","retry_after_ms":"soon"}"#.utf8),
            headers: ["Retry-After": "soon"])
        XCTAssertEqual(text.errcode, "M_LIMIT_EXCEEDED")
        XCTAssertNil(text.retryAfterMilliseconds)
        let fraction = MatrixHTTP.decodeError(status: 429, body: Data(#"{"retry_after_ms":2.5}"#.utf8), headers: [:])
        XCTAssertEqual(fraction.retryAfterMilliseconds, 3)
    }

    func testARetryAfterDateIsTakenRelativeToNowAndNeverInThePast() {
        let now = Date(timeIntervalSince1970: 784_111_777) // Sun, 06 Nov 1994 08:49:37 GMT
        let later = MatrixHTTP.decodeError(
            status: 503, body: Data(), headers: ["Retry-After": "Sun, 06 Nov 1994 08:50:07 GMT"],
            now: now)
        XCTAssertEqual(later.retryAfterMilliseconds, 30_000)
        let past = MatrixHTTP.decodeError(
            status: 503, body: Data(), headers: ["Retry-After": "Sat, 05 Nov 1994 08:49:37 GMT"],
            now: now)
        XCTAssertEqual(past.retryAfterMilliseconds, 0)
        let farFuture = MatrixHTTP.decodeError(
            status: 503, body: Data(), headers: ["Retry-After": "Fri, 31 Dec 9999 23:59:59 GMT"],
            now: now)
        XCTAssertEqual(farFuture.retryAfterMilliseconds, 3_600_000)
    }

    func testAnOriginServerTimestampIsAPlausibleWholeNumberOrNothing() {
        XCTAssertEqual(Rooms.microseconds(timestamp: 1_700_000_000_000), 1_700_000_000_000_000)
        XCTAssertNil(Rooms.microseconds(timestamp: 9.3e18))
        XCTAssertNil(Rooms.microseconds(timestamp: -1))
        XCTAssertNil(Rooms.microseconds(timestamp: 1.5))
    }
}
