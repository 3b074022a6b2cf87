import FerryCore
import FerryMatrix
@testable import FerrySender
import XCTest

/// How a failed request decides a delivery's fate.
final class DeliveryFailureTests: XCTestCase {
    private func sort(_ status: Int, _ errcode: String? = nil) -> DeliveryFailure {
        DeliveryFailure.from(
            MatrixError(kind: .http(status: status), errcode: errcode, message: "words"),
            destination: "#room:example.org", token: "secret")
    }

    func testAnUnknownTokenSignsOut() {
        guard case .unauthorized(let token) = sort(401, "M_UNKNOWN_TOKEN") else { return XCTFail("not unauthorized") }
        XCTAssertEqual(token, "secret")
    }

    func testRateLimitsAndServerTroubleAreTriedAgain() {
        for status in [429, 500, 502, 503] {
            guard case .transient = sort(status) else { return XCTFail("\(status) is not transient") }
        }
        guard
            case .transient = DeliveryFailure.from(
                MatrixError(kind: .transport, message: "refused"),
                destination: "!r", token: "t")
        else { return XCTFail() }
    }

    func testAForbiddenRoomFailsThatDestinationWithTheServersWords() {
        guard case .permanent(let error) = sort(403, "M_FORBIDDEN") else { return XCTFail("not permanent") }
        XCTAssertEqual(error, .forbidden("#room:example.org", reason: "words"))
    }

    func testAMissingRoomOrAliasIsRoomNotFound() {
        guard case .permanent(let error) = sort(404, "M_NOT_FOUND") else { return XCTFail("not permanent") }
        XCTAssertEqual(error, .roomNotFound("#room:example.org"))
    }

    func testAnythingElseIsDeliveryFailed() {
        guard case .permanent(let error) = sort(400, "M_BAD_JSON") else { return XCTFail("not permanent") }
        XCTAssertEqual(error.shortName, "DeliveryFailed")
    }
}
