@testable import FerryStaging
import XCTest

/// The copy waits for the reader behind it only while that reader keeps moving at no less than
/// half the copy's own pace: never for one that has not started, has stalled, is slow, or is
/// already there.
final class ReaderPaceTests: XCTestCase {
    private let ms: UInt64 = 1_000_000
    private let mib: UInt64 = 1 << 20

    /// A pace whose copy went at 1 MiB per millisecond (about 1 GB/s) for its first 8 MiB.
    private func pace() -> ReaderPace {
        var pace = ReaderPace(patience: 20 * ms, share: 0.5)
        for step in 0...8 {
            pace.copy(at: UInt64(step) * mib, now: UInt64(step) * ms)
            pace.copyGoesOn(from: UInt64(step) * mib, now: UInt64(step) * ms)
        }
        return pace
    }

    func testAReaderThatHasNotStartedIsNotWaitedFor() {
        XCTAssertFalse(pace().waits(for: 10 * mib, now: 9 * ms))
    }

    func testAReaderKeepingUpIsWaitedFor() {
        var pace = pace()
        pace.reader(at: 0, now: 0)
        pace.reader(at: 24 * mib, now: 30 * ms) // 24 MiB in the 10 ms after its first 20: 2.4 GB/s

        XCTAssertTrue(pace.waits(for: 28 * mib, now: 31 * ms))
    }

    func testAReaderAlreadyThereIsNotWaitedFor() {
        var pace = pace()
        pace.reader(at: 0, now: 0)
        pace.reader(at: 8 * mib, now: 4 * ms)

        XCTAssertFalse(pace.waits(for: 8 * mib, now: 5 * ms))
        XCTAssertFalse(pace.waits(for: 6 * mib, now: 5 * ms))
    }

    func testAReaderThatStoppedMovingIsNoLongerWaitedFor() {
        var pace = pace()
        pace.reader(at: 0, now: 0)
        pace.reader(at: 8 * mib, now: 2 * ms)
        // Asked again for the same offset: that is not moving.
        pace.reader(at: 8 * mib, now: 15 * ms)

        XCTAssertTrue(pace.waits(for: 12 * mib, now: 21 * ms))
        XCTAssertFalse(pace.waits(for: 12 * mib, now: 23 * ms), "20 ms since it last moved")
    }

    func testAReaderJustStartingIsGivenTimeToGetGoing() {
        var pace = pace()
        pace.reader(at: 0, now: 0)

        XCTAssertTrue(pace.waits(for: 4 * mib, now: 10 * ms))
        XCTAssertFalse(pace.waits(for: 4 * mib, now: 25 * ms), "not moved in 20 ms")
    }

    func testAReaderSlowerThanHalfTheCopysPaceIsNotWaitedFor() {
        var pace = pace()
        pace.reader(at: 0, now: 0)
        // Moving every few milliseconds, but 4 MiB in the 10 ms after its first 20 is 0.4 MiB/ms:
        // less than half the copy's 1 MiB/ms.
        pace.reader(at: 4 * mib, now: 29 * ms)

        XCTAssertFalse(pace.waits(for: 8 * mib, now: 30 * ms))
        // At 0.6 MiB/ms it would be.
        pace.reader(at: 6 * mib, now: 30 * ms)
        XCTAssertTrue(pace.waits(for: 8 * mib, now: 30 * ms))
    }

    func testTimeSpentWaitingIsNotCountedAsTheCopysOwn() {
        var pace = pace()
        // The copy then waited 100 ms before going on: its pace is still 1 MiB per millisecond.
        pace.copy(at: 9 * mib, now: 9 * ms)
        pace.copyGoesOn(from: 9 * mib, now: 109 * ms)
        pace.copy(at: 10 * mib, now: 110 * ms)
        pace.reader(at: 0, now: 0)
        pace.reader(at: 30 * mib, now: 100 * ms) // 0.375 MiB/ms after its first 20 ms

        XCTAssertFalse(pace.waits(for: 40 * mib, now: 110 * ms))
    }
}
