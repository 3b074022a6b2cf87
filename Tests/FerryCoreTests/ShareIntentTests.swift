import FerryCore
import XCTest

/// A share's type as a whole, and the intent value built from items.
final class ShareIntentTests: XCTestCase {
    func testTheCommonTypeOfIdenticalTypesIsThatType() {
        XCTAssertEqual(ContentTypeFamily.commonType(of: ["image/png", "image/png"]), "image/png")
    }

    func testTheCommonTypeOfTypesSharingAMajorTypeIsItsWildcard() {
        XCTAssertEqual(ContentTypeFamily.commonType(of: ["image/png", "image/jpeg"]), "image/*")
    }

    func testTheCommonTypeOfMixedMajorTypesIsEverything() {
        XCTAssertEqual(ContentTypeFamily.commonType(of: ["image/png", "application/pdf"]), "*/*")
    }

    func testTheCommonTypeOfNothingIsEverything() {
        XCTAssertEqual(ContentTypeFamily.commonType(of: []), "*/*")
    }

    func testOneItemIsASendAndSeveralASendMultipleOfTheirCommonType() {
        let png = ShareItem(kind: .file, name: "a.png", contentType: "image/png", size: 3, uri: "file:///a.png")
        let jpeg = ShareItem(kind: .file, name: "b.jpg", contentType: "image/jpeg", size: 4, uri: "file:///b.jpg")

        let one = ShareIntent(items: [png], subject: nil, message: nil, destinations: [], source: .open)
        let two = ShareIntent(items: [png, jpeg], subject: nil, message: nil, destinations: [], source: .open)

        XCTAssertEqual(one.action, .send)
        XCTAssertEqual(one.contentType, "image/png")
        XCTAssertEqual(two.action, .sendMultiple)
        XCTAssertEqual(two.contentType, "image/*")
    }

    func testChoosingDestinationsLaterKeepsTheItemsAndSubject() {
        let intent = ShareIntent(items: [.text("hi")], subject: "S", message: nil, destinations: [], source: .cli)

        let chosen = intent.with(destinations: ["!room"], message: "m")

        XCTAssertEqual(chosen.items, intent.items)
        XCTAssertEqual(chosen.subject, "S")
        XCTAssertEqual(chosen.source, .cli)
        XCTAssertEqual(chosen.destinations, ["!room"])
        XCTAssertEqual(chosen.message, "m")
    }

    func testTextAndLinkItemsArePlainTextSizedInUTF8Bytes() {
        XCTAssertEqual(
            ShareItem.text("café"),
            ShareItem(kind: .text, name: "café", contentType: "text/plain", size: 5, text: "café"))
        XCTAssertEqual(ShareItem.link("https://x.org/").kind, .link)
        XCTAssertEqual(ShareItem.link("https://x.org/").size, 14)
    }
}
