import FerryCore
import XCTest

/// Which destination strings name a room id, a room alias or a user.
final class DestinationTests: XCTestCase {
    func testRoomIDsAreOpaqueAfterTheirSigil() {
        XCTAssertEqual(Destination.kind(of: "!opaque"), .roomID)
        XCTAssertEqual(Destination.kind(of: "!abc:server"), .roomID)
    }

    func testAliasesAndUserIDsNeedAServer() {
        XCTAssertEqual(Destination.kind(of: "#a:b"), .roomAlias)
        XCTAssertEqual(Destination.kind(of: "@u:s"), .userID)
        XCTAssertEqual(Destination.kind(of: "@u:matrix.example.org:8448"), .userID)
        XCTAssertNil(Destination.kind(of: "#alias"))
        XCTAssertNil(Destination.kind(of: "@user"))
        XCTAssertNil(Destination.kind(of: "#:server"))
        XCTAssertNil(Destination.kind(of: "@user:"))
    }

    func testStringsWithoutASigilAreNotDestinations() {
        XCTAssertNil(Destination.kind(of: "room"))
        XCTAssertNil(Destination.kind(of: ""))
        XCTAssertNil(Destination.kind(of: "!"))
    }

    func testWhiteSpaceControlCharactersAndOverlongIDsAreRefused() {
        XCTAssertNil(Destination.kind(of: "!a b"))
        XCTAssertNil(Destination.kind(of: "!a\nb"))
        XCTAssertNil(Destination.kind(of: "#a:b\u{7}"))
        XCTAssertEqual(Destination.kind(of: "!" + String(repeating: "a", count: 254)), .roomID)
        XCTAssertNil(Destination.kind(of: "!" + String(repeating: "a", count: 255)))
    }
}
