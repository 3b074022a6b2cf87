import FerryStaging
import XCTest

/// A reader of a copy still being made never reads past what is written, and hears at once when
/// the copy fails or ends at another size than expected.
final class GrowingFileTests: XCTestCase {
    func testWhatIsWrittenIsAvailableAtOnce() async throws {
        let file = GrowingFile(expectedSize: 100)
        file.advance(to: 40)

        let readable = try await file.available(after: 0)

        XCTAssertEqual(readable, 40)
    }

    func testAReaderThatCaughtUpWaitsForTheNextWrite() async throws {
        let file = GrowingFile(expectedSize: 100)
        file.advance(to: 40)

        let reader = Task { try await file.available(after: 40) }
        // The reader is parked until something past byte 40 is written.
        try await Task.sleep(nanoseconds: 20_000_000)
        file.advance(to: 70)

        let readable = try await reader.value
        XCTAssertEqual(readable, 70)
    }

    func testNothingPastTheExpectedSizeIsReadable() async throws {
        let file = GrowingFile(expectedSize: 100)
        file.advance(to: 150)

        let readable = try await file.available(after: 0)

        XCTAssertEqual(readable, 100)
    }

    func testTheEndIsOnlyConfirmedWhenTheCopyEndsAtTheExpectedSize() async throws {
        let file = GrowingFile(expectedSize: 100)
        file.advance(to: 100)

        let waiting = Task { try await file.completed() }
        try await Task.sleep(nanoseconds: 20_000_000)
        file.finish(size: 100)

        try await waiting.value
    }

    func testACopyThatGrewPastTheExpectedSizeIsRefused() async throws {
        let file = GrowingFile(expectedSize: 100)
        file.advance(to: 100)

        let waiting = Task { try await file.completed() }
        try await Task.sleep(nanoseconds: 20_000_000)
        file.finish(size: 120)

        await XCTAssertThrowsErrorAsync(try await waiting.value) { error in
            XCTAssertEqual(error as? GrowingFile.Failure, .sizeChanged(expected: 100, actual: 120))
        }
    }

    func testACopyThatShrankIsRefusedToALateReaderToo() async throws {
        let file = GrowingFile(expectedSize: 100)
        file.finish(size: 60)

        await XCTAssertThrowsErrorAsync(try await file.available(after: 0)) { error in
            XCTAssertEqual(error as? GrowingFile.Failure, .sizeChanged(expected: 100, actual: 60))
        }
    }

    func testAFailedCopyWakesAWaitingReaderWithAnError() async throws {
        let file = GrowingFile(expectedSize: 100)
        let reader = Task { try await file.available(after: 0) }
        try await Task.sleep(nanoseconds: 20_000_000)

        file.fail()

        await XCTAssertThrowsErrorAsync(try await reader.value) { error in
            XCTAssertEqual(error as? GrowingFile.Failure, .abandoned)
        }
    }

    func testAGivenUpCopyStopsAReaderEvenAfterItWasComplete() async throws {
        let file = GrowingFile(expectedSize: 100)
        file.finish(size: 100)

        file.fail()

        await XCTAssertThrowsErrorAsync(try await file.available(after: 50)) { error in
            XCTAssertEqual(error as? GrowingFile.Failure, .abandoned)
        }
    }
}

func XCTAssertThrowsErrorAsync<T>(_ expression: @autoclosure () async throws -> T,
                                  file: StaticString = #filePath, line: UInt = #line,
                                  _ check: (any Error) -> Void = { _ in }) async {
    do {
        _ = try await expression()
        XCTFail("no error was thrown", file: file, line: line)
    } catch {
        check(error)
    }
}
