@testable import FerryCore
import XCTest

/// Share ids: lower-case ULIDs that sort by the time they were made.
final class ShareIDTests: XCTestCase {
    func testAnIDIs26CharactersOfCrockfordBase32() {
        let id = ShareID.make(milliseconds: 1_763_733_600_123)

        XCTAssertEqual(id.count, 26)
        XCTAssertTrue(ShareID.isWellFormed(id), id)
    }

    func testTheFirstTenCharactersAreTheTimeAsInTheULIDSpecification() {
        // The ULID specification's example: 01ARYZ6S41… was made at 1469918176385 ms.
        let id = ShareID.make(milliseconds: 1_469_918_176_385, random: (0, 0))

        XCTAssertEqual(id, "01aryz6s41" + String(repeating: "0", count: 16))
    }

    func testAllEightyRandomBitsAreUsed() {
        let id = ShareID.make(milliseconds: 0, random: (0xFFFF, .max))

        XCTAssertEqual(id, String(repeating: "0", count: 10) + String(repeating: "z", count: 16))
    }

    func testTheLargestTimeFillsTheTimeCharacters() {
        let id = ShareID.make(milliseconds: (1 << 48) - 1, random: (0, 0))

        XCTAssertEqual(id, "7" + String(repeating: "z", count: 9) + String(repeating: "0", count: 16))
    }

    func testIDsMadeAtIncreasingMillisecondsSortInTheSameOrder() {
        let times: [UInt64] = [
            0, 1, 31, 32, 1023, 1024, 1_469_918_176_385, 1_763_733_600_123, 1_763_733_600_124, (1 << 48) - 1,
        ]

        let ids = times.map { ShareID.make(milliseconds: $0) }

        XCTAssertEqual(ids.sorted(), ids)
    }

    func testALaterMillisecondSortsAfterwardsWhateverTheRandomBits() {
        let early = ShareID.make(milliseconds: 1_763_733_600_123, random: (0xFFFF, .max))
        let late = ShareID.make(milliseconds: 1_763_733_600_124, random: (0, 0))

        XCTAssertLessThan(early, late)
    }

    func testIDsMadeInTheSameMillisecondDiffer() {
        let ids = Set((0..<1000).map { _ in ShareID.make(milliseconds: 42) })

        XCTAssertEqual(ids.count, 1000)
    }

    func testIsWellFormedRefusesOtherStrings() {
        let good = ShareID.make(milliseconds: 1_763_733_600_123)

        XCTAssertFalse(ShareID.isWellFormed(""))
        XCTAssertFalse(ShareID.isWellFormed(String(good.dropLast())))
        XCTAssertFalse(ShareID.isWellFormed(good + "0"))
        XCTAssertFalse(ShareID.isWellFormed(good.uppercased()))
        for letter in ["i", "l", "o", "u", "-", " "] {
            XCTAssertFalse(ShareID.isWellFormed(String(good.dropLast()) + letter), letter)
        }
    }
}
