import FerryCore
import XCTest

/// `ferry:share?…` URIs (the Web Share Target fields, form-encoded) expanded into shares.
final class FerryLinkTests: XCTestCase {
    private func plan(_ uri: String, destinations: [String] = []) throws -> SharePlan {
        try SharePlan(request: ShareRequest(uris: [uri], destinations: destinations, source: .open), limits: Limits())
    }

    private func error(_ uri: String) -> ShareError? {
        planError(ShareRequest(uris: [uri], source: .open))
    }

    private func assertInvalidURI(_ uri: String, file: StaticString = #filePath, line: UInt = #line) {
        guard case .invalidURI(let named, _) = error(uri) else {
            return XCTFail(
                "expected invalidURI for \(uri), got \(String(describing: error(uri)))", file: file, line: line)
        }
        XCTAssertEqual(named, uri, "the error names the URI", file: file, line: line)
    }

    // MARK: Expansion

    func testURLMakesALinkShareWithTitleAsSubjectAndTextAsMessage() throws {
        let plan = try plan("ferry:share?title=A+page&text=Worth+reading&url=https%3A%2F%2Fexample.org%2Fa%3Fb%3Dc")

        XCTAssertEqual(plan.items, [.link("https://example.org/a?b=c")])
        XCTAssertEqual(plan.subject, "A page")
        XCTAssertEqual(plan.message, "Worth reading")
        XCTAssertEqual(plan.source, .uri)
    }

    func testURLWithoutTextHasNoMessage() throws {
        let plan = try plan("ferry:share?url=https%3A%2F%2Fexample.org%2F&text=")

        XCTAssertEqual(plan.items, [.link("https://example.org/")])
        XCTAssertNil(plan.message)
    }

    func testTextAloneMakesATextShare() throws {
        let plan = try plan("ferry:share?text=Hello+world")

        XCTAssertEqual(plan.items, [.text("Hello world")])
        XCTAssertNil(plan.message)
    }

    func testTextAloneThatIsAURLMakesALinkShare() throws {
        XCTAssertEqual(try plan("ferry:share?text=https%3A%2F%2Fexample.org%2F").items, [.link("https://example.org/")])
    }

    func testALinksToIsOnlyASuggestionTheCallsOwnDestinationsStay() throws {
        let plan = try plan(
            "ferry:share?text=hi&to=%21room%3Aexample.org&to=%23a%3Ab&to=%23a%3Ab", destinations: ["@u:s"])

        // Any web page can open a link: what it names is never a destination by itself.
        XCTAssertEqual(plan.destinations, ["@u:s"])
        XCTAssertEqual(plan.suggestedDestinations, ["!room:example.org", "#a:b"])
    }

    func testALinkWithOnlyItsOwnToHasNoDestinationSoItWaitsForAPerson() throws {
        let plan = try plan("ferry:share?text=hi&to=%21room%3Aexample.org")

        XCTAssertEqual(plan.destinations, [])
        XCTAssertEqual(Routing.route(destinations: plan.destinations, signedIn: true), .awaitingDestination)
    }

    func testAnInvalidToIsRefusedAsInvalidDestination() {
        XCTAssertEqual(error("ferry:share?text=hi&to=room"), .invalidDestination("room"))
    }

    func testDoubleSlashFormAndUpperCaseSchemeAreAccepted() throws {
        XCTAssertEqual(try plan("ferry://share?text=hi").items, [.text("hi")])
        XCTAssertEqual(try plan("FERRY:share?text=hi").items, [.text("hi")])
    }

    func testTextFromALinkIsHeldToTheSameLimits() {
        let long = String(repeating: "a", count: 40_000)

        XCTAssertEqual(error("ferry:share?text=" + long), .textTooLong(field: .text, bytes: 40_000, limit: 32768))
    }

    // MARK: Decoding

    func testPlusIsASpaceAndPercent2BIsAPlus() throws {
        XCTAssertEqual(try plan("ferry:share?text=1+%2B+1%20%3D+2").items, [.text("1 + 1 = 2")])
    }

    func testPercentEncodedUTF8IsDecoded() throws {
        XCTAssertEqual(try plan("ferry:share?text=caf%C3%A9+%E2%9C%93+%F0%9F%9A%A2").items, [.text("café ✓ 🚢")])
    }

    func testPercentEncodedAmpersandAndEqualsStayInTheValue() throws {
        XCTAssertEqual(try plan("ferry:share?text=a%26b%3Dc&ignored=1").items, [.text("a&b=c")])
    }

    func testAFragmentIsNotPartOfTheQuery() throws {
        let plan = try plan("ferry:share?text=hi&to=#a:b")

        XCTAssertEqual(plan.items, [.text("hi")])
        XCTAssertEqual(plan.destinations, [])
    }

    func testInvalidPercentEncodingIsRefusedAsInvalidURI() {
        for uri in [
            "ferry:share?text=%zz", "ferry:share?text=abc%", "ferry:share?text=%4", "ferry:share?text=%C3",
            "ferry:share?text=%FF%FE",
        ] {
            assertInvalidURI(uri)
        }
    }

    func testOtherFerryActionsAreRefusedAsInvalidURI() {
        assertInvalidURI("ferry:other?text=hi")
        assertInvalidURI("ferry:sharing?text=hi")
    }

    func testALinkWithoutTextOrURLIsRefusedAsInvalidURI() {
        assertInvalidURI("ferry:share")
        assertInvalidURI("ferry:share?title=Only+a+title")
        assertInvalidURI("ferry:share?text=&url=")
    }

    // MARK: Combinations

    func testAFerryURIMixedWithOtherURIsIsRefusedAsInvalidArgument() {
        let error = planError(ShareRequest(uris: ["file:///a.png", "ferry:share?text=hi"], source: .open))

        guard case .invalidArgument = error else {
            return XCTFail("expected invalidArgument, got \(String(describing: error))")
        }
    }

    func testAFerryURIWithItsOwnTextArgumentIsRefusedAsInvalidArgument() {
        let error = planError(ShareRequest(uris: ["ferry:share?text=hi"], text: "more", source: .share))

        guard case .invalidArgument = error else {
            return XCTFail("expected invalidArgument, got \(String(describing: error))")
        }
    }

    // MARK: Parsing alone

    func testParsingKeepsEveryFieldAndIgnoresUnknownOnes() throws {
        let link = try FerryLink(parsing: "ferry:share/?title=T&text=X&url=U&to=%21a&to=%40b%3Ac&utm_source=mail")

        XCTAssertEqual(link.title, "T")
        XCTAssertEqual(link.text, "X")
        XCTAssertEqual(link.url, "U")
        XCTAssertEqual(link.destinations, ["!a", "@b:c"])
    }

    func testParsingANonFerryURIFails() {
        XCTAssertThrowsError(try FerryLink(parsing: "https://example.org/?text=hi"))
    }
}
