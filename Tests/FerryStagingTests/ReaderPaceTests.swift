@testable import FerryStaging
import XCTest

/// The copy waits for the reader behind it only while that reader keeps moving at a pace worth
/// waiting for: never for one that has not started, has stalled, is slow, or is already there.
final class ReaderPaceTests: XCTestCase {
    private let ms: UInt64 = 1_000_000
    private let mib: UInt64 = 1 << 20

    private func pace() -> ReaderPace { ReaderPace(patience: 20 * ms, slowest: 250_000_000) }

    func testAReaderThatHasNotStartedIsNotWaitedFor() {
        XCTAssertFalse(pace().waits(for: 10 * mib, now: 5 * ms))
    }

    func testAReaderKeepingUpIsWaitedFor() {
        var pace = pace()
        pace.reader(at: 0, now: 0)
        pace.reader(at: 2 * mib, now: 2 * ms)  // 1 GB/s

        XCTAssertTrue(pace.waits(for: 6 * mib, now: 3 * ms))
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

    func testAReaderSlowerThanTheSlowestPaceIsNotWaitedFor() {
        var pace = pace()
        pace.reader(at: 0, now: 0)
        // It moves every few milliseconds, but 10 MiB in 100 ms (less 20 for getting going) is 131 MB/s.
        pace.reader(at: 10 * mib, now: 100 * ms)

        XCTAssertFalse(pace.waits(for: 20 * mib, now: 101 * ms))
    }

    func testAReaderJustStartingIsGivenTimeToGetGoing() {
        var pace = pace()
        pace.reader(at: 0, now: 0)

        XCTAssertTrue(pace.waits(for: 4 * mib, now: 10 * ms))
        XCTAssertFalse(pace.waits(for: 4 * mib, now: 25 * ms), "not moved in 20 ms")
    }
}
