import FerryCore
import XCTest

/// A text event is counted as the server counts it: JSON bytes of the message and its text together.
final class EventSizeTests: XCTestCase {
    func testJSONBytesCountQuotesAndEscapes() {
        XCTAssertEqual(EventSize.jsonBytes("abc"), 5)
        XCTAssertEqual(EventSize.jsonBytes("a\"b"), 6)
        XCTAssertEqual(EventSize.jsonBytes("\n"), 4)
        XCTAssertEqual(EventSize.jsonBytes("\u{1}"), 8)
        XCTAssertEqual(EventSize.jsonBytes("é"), 4)
    }

    func testAMessageAndALinkEachUnderTheirLimitButTooLargeTogetherAreRefusedAtIntake() {
        let link = "https://example.org/" + String(repeating: "a", count: 32_000)
        let message = String(repeating: "m", count: 32_000)
        let request = ShareRequest(text: link, message: message, destinations: ["!room:example.org"], source: .share)

        XCTAssertThrowsError(try SharePlan(request: request, limits: Limits())) { error in
            guard case .textTooLong(_, let bytes, let limit)? = error as? ShareError else { return XCTFail("\(error)") }
            XCTAssertGreaterThan(bytes, limit)
            XCTAssertEqual(limit, EventSize.bodyLimit)
        }
    }

    func testControlCharactersCountAsTheSixBytesJSONMakesOfThem() {
        let text = String(repeating: "\u{1}", count: 12_000) // 12,000 bytes, under the 32,768 text limit
        XCTAssertThrowsError(try SharePlan(request: ShareRequest(text: text, source: .share), limits: Limits()))
    }

    func testATextJustUnderTheLimitIsAccepted() throws {
        let text = String(repeating: "a", count: EventSize.bodyLimit - 2)
        var limits = Limits()
        limits.maxTextBytes = 100_000
        XCTAssertNoThrow(try SharePlan(request: ShareRequest(text: text, source: .share), limits: limits))
        XCTAssertThrowsError(try SharePlan(request: ShareRequest(text: text + "a", source: .share), limits: limits))
    }
}
