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
        let soft = MatrixHTTP.decodeError(status: 401, body: Data(#"{"errcode":"M_UNKNOWN_TOKEN","error":"x","soft_logout":true}"#.utf8),
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
}
