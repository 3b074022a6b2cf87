import FerryCore
import XCTest

/// When a shared text is a link: exactly one URL of a known scheme, and nothing else.
final class TextKindTests: XCTestCase {
    func testAnHTTPSURLIsALink() {
        XCTAssertEqual(TextKind.link(in: "https://x.org/a"), "https://x.org/a")
    }

    func testAURLInsideASentenceIsNotALink() {
        XCTAssertNil(TextKind.link(in: "see https://x"))
    }

    func testASchemeWithoutAHostIsNotALink() {
        XCTAssertNil(TextKind.link(in: "https://"))
        XCTAssertNil(TextKind.link(in: "https:///path"))
        XCTAssertNil(TextKind.link(in: "https:x.org"))
    }

    func testAMailtoURIIsALink() {
        XCTAssertEqual(TextKind.link(in: "mailto:a@b"), "mailto:a@b")
    }

    func testAnEmptyOpaqueURIIsNotALink() {
        XCTAssertNil(TextKind.link(in: "mailto:"))
    }

    func testTextWithAColonButAnUnknownSchemeIsNotALink() {
        XCTAssertNil(TextKind.link(in: "note:this"))
        XCTAssertNil(TextKind.link(in: "file:///etc/passwd"))
    }

    func testSurroundingWhiteSpaceIsTrimmed() {
        XCTAssertEqual(TextKind.link(in: "\n  https://x.org/a \t"), "https://x.org/a")
    }

    func testTheSchemeIsCaseInsensitive() {
        XCTAssertEqual(TextKind.link(in: "HTTPS://X.ORG/"), "HTTPS://X.ORG/")
    }

    func testMatrixAndGeoURIsAreLinks() {
        XCTAssertNotNil(TextKind.link(in: "matrix:r/room:example.org"))
        XCTAssertNotNil(TextKind.link(in: "geo:37.786971,-122.399677"))
    }

    func testTrimmingWhitespaceUsesUnicodeWhiteSpace() {
        XCTAssertEqual("\u{3000} a b \u{2003}\n".trimmingWhitespace(), "a b")
        XCTAssertEqual(" \t ".trimmingWhitespace(), "")
    }
}
