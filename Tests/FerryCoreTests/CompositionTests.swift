@testable import FerryCore
import XCTest

/// The product design's composition rules, as steps.
final class CompositionTests: XCTestCase {
    private func intent(_ items: [ShareItem], message: String? = nil) -> ShareIntent {
        ShareIntent(items: items, subject: nil, message: message, destinations: ["!room"], source: .cli)
    }

    private func file(_ name: String, _ type: String) -> ShareItem {
        ShareItem(kind: .file, name: name, contentType: type, size: 10, uri: "file:///tmp/" + name)
    }

    func testPlainTextIsOneTextMessage() {
        XCTAssertEqual(Composition.steps(for: intent([.text("Ferry at nine")])), [.text("Ferry at nine")])
    }

    func testALinkAloneIsOneTextMessage() {
        XCTAssertEqual(Composition.steps(for: intent([.link("https://example.org/")])), [.text("https://example.org/")])
    }

    func testALinkWithAMessageIsOneMessageWithTheLinkLast() {
        let steps = Composition.steps(for: intent([.link("https://example.org/")], message: "Timetable"))

        XCTAssertEqual(steps, [.text("Timetable\nhttps://example.org/")])
    }

    func testFilesWithAMessageAreTheMessageFirstThenEachFileInOrder() {
        let steps = Composition.steps(
            for: intent(
                [file("a.png", "image/png"), file("b.pdf", "application/pdf")],
                message: "Two things"))

        XCTAssertEqual(steps, [.text("Two things"), .file(item: 0), .file(item: 1)])
    }

    func testOneFileWithAMessageIsOneEventWithTheMessageAsItsCaption() {
        let steps = Composition.steps(for: intent([file("harbour.jpg", "image/jpeg")], message: "Look"))

        XCTAssertEqual(steps, [.captionedFile(item: 0, caption: "Look")])
    }

    func testOneFileWithAMessageAndATextOrLinkKeepsTheWordsAsTheirOwnMessage() {
        let withLink = Composition.steps(
            for: intent([file("a.png", "image/png"), .link("https://example.org/")], message: "See"))
        XCTAssertEqual(withLink, [.text("See\nhttps://example.org/"), .file(item: 0)])
        let withText = Composition.steps(for: intent([.text("words"), file("a.png", "image/png")]))
        XCTAssertEqual(withText, [.text("words"), .file(item: 1)], "a text item is no message: no caption")
    }

    func testFilesWithoutAMessageAreOnlyTheFiles() {
        XCTAssertEqual(Composition.steps(for: intent([file("a.png", "image/png")])), [.file(item: 0)])
    }

    func testMessageTypesFollowTheContentType() {
        XCTAssertEqual(Composition.messageType(forContentType: "image/png"), "m.image")
        XCTAssertEqual(Composition.messageType(forContentType: "video/mp4"), "m.video")
        XCTAssertEqual(Composition.messageType(forContentType: "audio/ogg"), "m.audio")
        XCTAssertEqual(Composition.messageType(forContentType: "application/pdf"), "m.file")
        XCTAssertEqual(Composition.messageType(forContentType: "text/plain"), "m.file")
    }
}

final class DeliveryOutcomeTests: XCTestCase {
    private func delivery(_ state: Delivery.State) -> Delivery { Delivery(destination: "!r", state: state) }

    func testEveryDeliverySentMakesTheShareSent() {
        XCTAssertEqual(DeliveryOutcome.shareState(of: [delivery(.sent), delivery(.sent)]), .sent)
    }

    func testAFailureWithNothingLeftToTryMakesTheShareFailed() {
        XCTAssertEqual(DeliveryOutcome.shareState(of: [delivery(.sent), delivery(.failed)]), .failed)
    }

    func testADeliveryStillRetryingKeepsTheShareSending() {
        XCTAssertEqual(DeliveryOutcome.shareState(of: [delivery(.failed), delivery(.retrying)]), .sending)
        XCTAssertEqual(DeliveryOutcome.shareState(of: [delivery(.sent), delivery(.queued)]), .sending)
    }
}

final class BackoffTests: XCTestCase {
    let backoff = Backoff(initial: 1_000_000, maximum: 60_000_000)

    func testTheDelayDoublesWithEachAttempt() {
        XCTAssertEqual(backoff.delay(attempt: 1, jitter: 0.5), 1_000_000)
        XCTAssertEqual(backoff.delay(attempt: 2, jitter: 0.5), 2_000_000)
        XCTAssertEqual(backoff.delay(attempt: 4, jitter: 0.5), 8_000_000)
    }

    func testJitterSpreadsTheDelayBetween75And125Percent() {
        XCTAssertEqual(backoff.delay(attempt: 3, jitter: 0), 3_000_000)
        XCTAssertEqual(backoff.delay(attempt: 3, jitter: 0.999_999), 4_999_998, accuracy: 10)
    }

    func testTheDelayNeverPassesTheMaximum() {
        XCTAssertEqual(backoff.delay(attempt: 40, jitter: 1), 60_000_000)
    }

    func testTheServersRetryAfterWinsWhenItIsLonger() {
        XCTAssertEqual(backoff.delay(attempt: 1, retryAfterMilliseconds: 7_000, jitter: 0.5), 7_000_000)
        XCTAssertEqual(backoff.delay(attempt: 3, retryAfterMilliseconds: 0, jitter: 0.5), 4_000_000)
    }
}
