@testable import FerryUI
import FerryContract
import FerryCore
import GLibAdapter
import XCTest

/// Reading the service's a{sv} values into what the windows show.
final class SnapshotTests: XCTestCase {
    func testAShareWithDeliveriesDecodes() throws {
        let share = try XCTUnwrap(
            ShareSnapshot([
                "id": .string("s1"), "state": .string("failed"),
                "items": .dictionaries([
                    [
                        "kind": .string("file"), "name": .string("a.png"),
                        "content-type": .string("image/png"), "size": .uint64(2048),
                        "uri": .string("file:///tmp/a%20b.png"),
                    ]
                ]),
                "deliveries": .dictionaries([
                    [
                        "destination": .string("!r"), "state": .string("failed"),
                        "error-name": .string("io.github.ferryshare.Ferry.Error.Forbidden"),
                        "error-message": .string("You may not post in this room."),
                    ]
                ]),
            ]))
        XCTAssertEqual(share.state, .failed)
        XCTAssertEqual(share.title, "a.png")
        XCTAssertEqual(share.failureMessage, "You may not post in this room.")
        XCTAssertEqual(share.files.first?.size, 2048)
    }

    func testTitlesNeverCarryControlCharacters() throws {
        let share = try XCTUnwrap(
            ShareSnapshot([
                "id": .string("s"), "state": .string("awaiting-destination"),
                "items": .dictionaries([["kind": .string("file"), "name": .string("evil\u{202E}gnp.exe")]]),
            ]))
        XCTAssertEqual(share.title, "evil\\u{202E}gnp.exe")
    }

    func testEncryptedRoomsSayWhyTheyCannotBePicked() throws {
        let listing = try XCTUnwrap(
            DestinationListing([
                "id": .string("!e"), "name": .string("Secret"),
                "encrypted": .bool(true), "members": .uint32(3),
            ]))
        XCTAssertTrue(listing.encrypted)
        XCTAssertTrue(listing.detail.contains("encrypted"))
    }

    func testWithSeveralAccountsARowSaysWhoseRoomItIs() throws {
        let listing = try XCTUnwrap(
            DestinationListing([
                "id": .string("!w"), "name": .string("Team"), "alias": .string("#team:work"),
                "members": .uint32(3), "account": .string("@me:work"),
            ]))
        XCTAssertEqual(listing.detail(showingAccount: false), listing.detail)
        XCTAssertEqual(listing.detail(showingAccount: true), listing.detail + " · @me:work")
    }

    func testAFileURIBecomesAPathOnlyWhenLocal() {
        XCTAssertEqual(SharePreview.percentDecoded("/tmp/a%20b.png"), "/tmp/a b.png")
        XCTAssertNil(
            SharePreview.localPath(
                ShareItem(
                    kind: .file, name: "x", contentType: "image/png", size: 1,
                    uri: "sftp://host/x.png")))
    }
}
