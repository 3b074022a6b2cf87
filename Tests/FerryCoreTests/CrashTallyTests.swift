import FerryCore
import XCTest

final class CrashTallyTests: XCTestCase {
    func testAShareThatCrashedTheServiceThreeTimesIsGivenUpOthersAreKept() {
        let notes = "a\nb\na\nc\na\nb\n"

        let tally = CrashTally(notes: notes, unfinished: ["a", "b"])

        XCTAssertEqual(tally.givenUp, ["a"])
        XCTAssertEqual(tally.remainingNotes, "b\nb\n")
    }

    func testNotesOfSettledSharesAndTornLinesCountForNothing() {
        let tally = CrashTally(notes: "gone\ngone\ngone\nx\nxy", unfinished: ["x"])
        XCTAssertEqual(tally.givenUp, [])
        XCTAssertEqual(tally.remainingNotes, "x\n")
    }

    func testNoNotesNoVerdict() {
        let tally = CrashTally(notes: "", unfinished: ["a"])
        XCTAssertEqual(tally.givenUp, [])
        XCTAssertEqual(tally.remainingNotes, "")
    }
}
