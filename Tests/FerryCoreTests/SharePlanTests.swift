import FerryCore
import XCTest

/// How a request's uris, text, message and subject combine into a plan, and which requests are refused.
final class SharePlanTests: XCTestCase {
    // MARK: Files

    func testFilesBecomeFileItemsInOrderWithTextAsTheirMessage() throws {
        let plan = try SharePlan(
            request: ShareRequest(
                uris: ["file:///a.png", "file:///b.png"], text: "Look at these",
                source: .share), limits: Limits())

        XCTAssertEqual(plan.items, [.file(uri: "file:///a.png"), .file(uri: "file:///b.png")])
        XCTAssertEqual(plan.message, "Look at these")
    }

    func testFilesTakeTheirMessageFromMessage() throws {
        let plan = try SharePlan(
            request: ShareRequest(uris: ["file:///a.png"], message: "For you", source: .cli),
            limits: Limits())

        XCTAssertEqual(plan.items, [.file(uri: "file:///a.png")])
        XCTAssertEqual(plan.message, "For you")
        XCTAssertEqual(plan.source, .cli)
    }

    func testFilesWithBothTextAndMessageAreRefusedAsInvalidArgument() {
        let error = planError(ShareRequest(uris: ["file:///a.png"], text: "one", message: "two", source: .share))

        guard case .invalidArgument = error else {
            return XCTFail("expected invalidArgument, got \(String(describing: error))")
        }
    }

    func testFilesWithBlankTextHaveNoMessage() throws {
        let plan = try SharePlan(
            request: ShareRequest(uris: ["file:///a.png"], text: "  \n", source: .share),
            limits: Limits())

        XCTAssertNil(plan.message)
    }

    // MARK: Text and links

    func testTextAloneIsATextItem() throws {
        let plan = try SharePlan(request: ShareRequest(text: "Hello there", source: .share), limits: Limits())

        XCTAssertEqual(plan.items, [.text("Hello there")])
        XCTAssertNil(plan.message)
    }

    func testTextThatIsASingleURLIsALinkItem() throws {
        let plan = try SharePlan(
            request: ShareRequest(text: " https://example.org/a \n", source: .share), limits: Limits())

        XCTAssertEqual(plan.items, [.link("https://example.org/a")])
    }

    func testALinkMayCarryAMessage() throws {
        let plan = try SharePlan(
            request: ShareRequest(text: "https://example.org/", message: "Read this", source: .share),
            limits: Limits())

        XCTAssertEqual(plan.items, [.link("https://example.org/")])
        XCTAssertEqual(plan.message, "Read this")
    }

    func testPlainTextWithAMessageIsRefusedAsInvalidArgument() {
        let error = planError(ShareRequest(text: "Hello", message: "and more", source: .share))

        guard case .invalidArgument = error else {
            return XCTFail("expected invalidArgument, got \(String(describing: error))")
        }
    }

    func testEmptyTextIsRefusedAsEmptyText() {
        XCTAssertEqual(planError(ShareRequest(text: "", source: .share)), .emptyText)
    }

    func testBlankTextIsRefusedAsEmptyText() {
        XCTAssertEqual(planError(ShareRequest(text: " \t\n\u{3000}", source: .share)), .emptyText)
    }

    func testNothingToShareIsRefusedAsEmptyShare() {
        XCTAssertEqual(planError(ShareRequest(source: .share)), .emptyShare)
    }

    func testAMessageAloneIsRefusedAsEmptyShare() {
        XCTAssertEqual(planError(ShareRequest(message: "just words", source: .share)), .emptyShare)
    }

    // MARK: Limits

    func testMoreURIsThanTheLimitAreRefusedAsTooManyItems() {
        let uris = (0..<3).map { "file:///f\($0)" }

        XCTAssertEqual(
            planError(ShareRequest(uris: uris, source: .open), limits: Limits(maxItems: 2)),
            .tooManyItems(count: 3, limit: 2))
    }

    func testURIsExactlyAtTheLimitAreAccepted() throws {
        let uris = (0..<2).map { "file:///f\($0)" }

        let plan = try SharePlan(request: ShareRequest(uris: uris, source: .open), limits: Limits(maxItems: 2))

        XCTAssertEqual(plan.items.count, 2)
    }

    func testTooManyItemsIsReportedBeforeAnyOtherProblem() {
        let request = ShareRequest(
            uris: (0..<10_000).map { "ferry:nonsense\($0)" }, text: "x", subject: String(repeating: "s", count: 5000),
            message: "y", destinations: ["room", "@user"], source: .share)

        XCTAssertEqual(planError(request), .tooManyItems(count: 10_000, limit: 1000))
    }

    func testTextOverTheByteLimitIsRefusedNamingTheTextField() {
        // Six characters, twelve bytes: the limit is in UTF-8 bytes.
        let error = planError(
            ShareRequest(text: String(repeating: "é", count: 6), source: .share),
            limits: Limits(maxTextBytes: 10))

        XCTAssertEqual(error, .textTooLong(field: .text, bytes: 12, limit: 10))
    }

    func testTextExactlyAtTheByteLimitIsAccepted() throws {
        let plan = try SharePlan(
            request: ShareRequest(text: String(repeating: "é", count: 5), source: .share),
            limits: Limits(maxTextBytes: 10))

        XCTAssertEqual(plan.items, [.text(String(repeating: "é", count: 5))])
    }

    func testMessageOverTheByteLimitIsRefusedNamingTheMessageField() {
        let error = planError(
            ShareRequest(uris: ["file:///a"], message: String(repeating: "m", count: 11), source: .share),
            limits: Limits(maxTextBytes: 10))

        XCTAssertEqual(error, .textTooLong(field: .message, bytes: 11, limit: 10))
    }

    func testSubjectOverTheByteLimitIsRefusedNamingTheSubjectField() {
        let error = planError(
            ShareRequest(text: "hello", subject: String(repeating: "s", count: 5), source: .share),
            limits: Limits(maxSubjectBytes: 4))

        XCTAssertEqual(error, .textTooLong(field: .subject, bytes: 5, limit: 4))
    }

    func testMoreDestinationsThanTheLimitAreRefusedAsInvalidArgument() {
        let error = planError(
            ShareRequest(text: "hi", destinations: ["!a", "!b", "!c"], source: .share),
            limits: Limits(maxDestinations: 2))

        guard case .invalidArgument = error else {
            return XCTFail("expected invalidArgument, got \(String(describing: error))")
        }
    }

    // MARK: Destinations and subject

    func testDestinationsThatAreNotRoomsAliasesOrUsersAreRefused() {
        for destination in ["room", "#alias", "@user", "!", "", "#:server", "@user:", "!room with space"] {
            XCTAssertEqual(
                planError(ShareRequest(text: "hi", destinations: ["!fine:example.org", destination], source: .share)),
                .invalidDestination(destination), "destination \(destination.debugDescription)")
        }
    }

    func testRoomIDsAliasesAndUserIDsAreAccepted() throws {
        let destinations = ["!opaque", "!abc:server", "#a:b", "@u:s"]

        let plan = try SharePlan(
            request: ShareRequest(text: "hi", destinations: destinations, source: .share), limits: Limits())

        XCTAssertEqual(plan.destinations, destinations)
    }

    func testDuplicateDestinationsAreRemovedKeepingTheFirstOrder() throws {
        let plan = try SharePlan(
            request: ShareRequest(text: "hi", destinations: ["#b:x", "!a", "#b:x", "@c:d", "!a"], source: .share),
            limits: Limits())

        XCTAssertEqual(plan.destinations, ["#b:x", "!a", "@c:d"])
    }

    func testSubjectIsKeptAndABlankSubjectIsDropped() throws {
        let kept = try SharePlan(
            request: ShareRequest(text: "hi", subject: "Greeting", source: .share), limits: Limits())
        let dropped = try SharePlan(request: ShareRequest(text: "hi", subject: "   ", source: .share), limits: Limits())

        XCTAssertEqual(kept.subject, "Greeting")
        XCTAssertNil(dropped.subject)
    }

    // MARK: URI schemes

    func testURISchemeFollowsRFC3986AndIsLowerCased() {
        XCTAssertEqual(SharePlan.uriScheme("FILE:///a"), "file")
        XCTAssertEqual(SharePlan.uriScheme("svn+ssh://host/x"), "svn+ssh")
        XCTAssertNil(SharePlan.uriScheme("/tmp/a"))
        XCTAssertNil(SharePlan.uriScheme("1abc:x"))
        XCTAssertNil(SharePlan.uriScheme("a b:c"))
    }
}

/// The error making a plan of `request` fails with, or nil when it succeeds.
func planError(_ request: ShareRequest, limits: Limits = Limits()) -> ShareError? {
    do {
        _ = try SharePlan(request: request, limits: limits)
        return nil
    } catch {
        return error
    }
}
