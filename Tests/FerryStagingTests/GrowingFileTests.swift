@testable import FerryStaging
import Foundation
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

    // The window: the latest bytes the copy wrote, for a reader close behind it.

    func testTheLatestBytesWrittenAreTakenFromMemory() {
        let file = GrowingFile(expectedSize: 1000)
        startReading(file)
        let bytes = pattern(0..<1000)
        bytes.withUnsafeBytes { file.advance(to: 600, bytes: UnsafeRawBufferPointer(rebasing: $0[0..<600])) }

        XCTAssertEqual(recent(file, at: 200, count: 300), Array(bytes[200..<500]))
        // Never more than was written, and nothing at or past the end of it.
        XCTAssertEqual(recent(file, at: 500, count: 300), Array(bytes[500..<600]))
        XCTAssertEqual(recent(file, at: 600, count: 10), [])
    }

    func testOnlyTheLastFewMegabytesAreKeptAndReadsAcrossTheRingsWrapAreWhole() {
        let chunk = 1 << 20
        let chunks = GrowingFile.windowSize / chunk + 1
        let bytes = pattern(0..<(chunks * chunk))
        let file = GrowingFile(expectedSize: UInt64(bytes.count), patienceMilliseconds: 1)
        startReading(file)
        for index in 0..<chunks {
            bytes.withUnsafeBytes { raw in
                file.advance(
                    to: UInt64((index + 1) * chunk),
                    bytes: UnsafeRawBufferPointer(rebasing: raw[(index * chunk)..<((index + 1) * chunk)]))
            }
        }

        XCTAssertEqual(recent(file, at: 0, count: 100), [], "the first chunk has left the window")
        let oldest = bytes.count - GrowingFile.windowSize
        XCTAssertEqual(recent(file, at: UInt64(oldest), count: 100), Array(bytes[oldest..<(oldest + 100)]))
        // The last chunk went where the first was: a read that ends one chunk and begins the next
        // wraps around the ring.
        let across = bytes.count - chunk - 100
        XCTAssertEqual(recent(file, at: UInt64(across), count: 200), Array(bytes[across..<(across + 200)]))
    }

    func testBytesThatDoNotFollowOnFromTheWindowStartItAfresh() {
        let file = GrowingFile(expectedSize: 1000)
        startReading(file)
        let bytes = pattern(0..<1000)
        bytes.withUnsafeBytes { raw in
            file.advance(to: 100, bytes: UnsafeRawBufferPointer(rebasing: raw[0..<100]))
            file.advance(to: 300) // copied without passing through memory
            file.advance(to: 400, bytes: UnsafeRawBufferPointer(rebasing: raw[300..<400]))
        }

        XCTAssertEqual(recent(file, at: 50, count: 10), [])
        XCTAssertEqual(recent(file, at: 200, count: 10), [])
        XCTAssertEqual(recent(file, at: 300, count: 200), Array(bytes[300..<400]))
    }

    func testAFailedCopyAndAReaderAtTheEndLetTheWindowGo() async throws {
        let bytes = pattern(0..<100)
        let failed = GrowingFile(expectedSize: 100)
        startReading(failed)
        bytes.withUnsafeBytes { failed.advance(to: 100, bytes: $0) }
        failed.fail()
        XCTAssertEqual(recent(failed, at: 0, count: 10), [])

        let read = GrowingFile(expectedSize: 100)
        startReading(read)
        bytes.withUnsafeBytes { read.advance(to: 100, bytes: $0) }
        read.finish(size: 100)
        XCTAssertEqual(recent(read, at: 90, count: 10), Array(bytes[90..<100]))
        try await read.completed()
        XCTAssertEqual(recent(read, at: 90, count: 10), [], "read to its end, the file needs no window")
    }

    func testACopyFasterThanItsReaderWaitsForItSoEveryByteIsTakenFromMemory() async throws {
        // The copy is a loop of memory copies, far faster than the reader: without waiting for it,
        // it would be done before the reader took its second chunk, and most bytes would have to be
        // read back. (Patience and pace generous: a loaded machine must not make this flaky.)
        let chunk = 1 << 20
        let bytes = pattern(0..<(8 * chunk))
        let file = GrowingFile(expectedSize: UInt64(bytes.count), patienceMilliseconds: 10_000, readerShare: 0)
        let reader = Task {
            var taken: [UInt8] = []
            var misses = 0
            var buffer = [UInt8](repeating: 0, count: 512 << 10)
            while taken.count < bytes.count {
                let readable = try await file.available(after: UInt64(taken.count))
                let wanted = min(buffer.count, Int(readable) - taken.count)
                let count = buffer.withUnsafeMutableBytes {
                    file.copyRecent(
                        at: UInt64(taken.count), into: UnsafeMutableRawBufferPointer(rebasing: $0[..<wanted]))
                }
                if count == 0 { misses += 1; break }
                taken += buffer[..<count]
            }
            return (taken, misses)
        }
        startReading(file) // however soon the copy begins, the reader counts as started
        let writer = Thread {
            for index in 0..<8 {
                bytes.withUnsafeBytes { raw in
                    file.advance(
                        to: UInt64((index + 1) * chunk),
                        bytes: UnsafeRawBufferPointer(rebasing: raw[(index * chunk)..<((index + 1) * chunk)]))
                }
            }
            file.finish(size: UInt64(bytes.count))
        }
        writer.start()

        let (taken, misses) = try await reader.value

        XCTAssertEqual(misses, 0)
        XCTAssertTrue(taken == bytes, "the bytes taken are not the bytes written")
    }

    func testACopyDoesNotWaitForAReaderThatStoppedAndLetsTheWindowGo() throws {
        // Every chunk the same bytes: what is checked is which offsets the window still holds.
        let chunk = 1 << 20
        let bytes = pattern(0..<chunk)
        let chunks = Int((GrowingFile.reach + UInt64(GrowingFile.windowSize)) / UInt64(chunk)) + 2
        let size = UInt64(chunks * chunk)
        let file = GrowingFile(expectedSize: size, patienceMilliseconds: 50, readerShare: 0)
        startReading(file)
        // The reader takes the first bytes, and no more.
        bytes.withUnsafeBytes { file.advance(to: UInt64(chunk), bytes: $0) }
        XCTAssertEqual(recent(file, at: 0, count: 100), Array(bytes[..<100]))

        // The copy still ends: it waits out the patience once, then goes on alone
        let ended = expectation(description: "the copy ended")
        let writer = Thread {
            for index in 1..<chunks {
                bytes.withUnsafeBytes { file.advance(to: UInt64((index + 1) * chunk), bytes: $0) }
            }
            file.finish(size: size)
            ended.fulfill()
        }
        writer.start()
        wait(for: [ended], timeout: 30)

        // And, the reader far behind, the window is gone: even the last bytes are read from the file
        XCTAssertEqual(recent(file, at: size - 100, count: 100), [])
    }

    func testAReaderThatStoppedLetsTheWindowGoAndIsNotWaitedFor() throws {
        let chunk = 1 << 20
        let bytes = pattern(0..<chunk)
        // Patience far longer than the test's wait: a copy still waiting for the reader fails it.
        let file = GrowingFile(expectedSize: 64 << 20, patienceMilliseconds: 60_000, readerShare: 0)
        startReading(file)
        bytes.withUnsafeBytes { file.advance(to: UInt64(chunk), bytes: $0) }
        XCTAssertEqual(recent(file, at: 0, count: 100), Array(bytes[..<100]))

        file.readerStopped()

        XCTAssertEqual(recent(file, at: 0, count: 100), [], "the window went with its reader")
        let ended = expectation(description: "the copy went on")
        let writer = Thread {
            for index in 1..<16 { bytes.withUnsafeBytes { file.advance(to: UInt64((index + 1) * chunk), bytes: $0) } }
            ended.fulfill()
        }
        writer.start()
        wait(for: [ended], timeout: 20)
        XCTAssertEqual(recent(file, at: UInt64(15 * chunk), count: 100), [], "nothing kept after it")
    }

    func testAReaderThatStartedLateIsWaitedForWhileItCatchesUp() {
        let chunk = 1 << 20
        let bytes = pattern(0..<chunk)
        let file = GrowingFile(expectedSize: 64 << 20, patienceMilliseconds: 1, readerShare: 0)
        // 16 MiB copied before the reader's first call; it reads the file from the start.
        for index in 0..<16 { bytes.withUnsafeBytes { file.advance(to: UInt64((index + 1) * chunk), bytes: $0) } }
        startReading(file)
        for index in 16..<19 { bytes.withUnsafeBytes { file.advance(to: UInt64((index + 1) * chunk), bytes: $0) } }

        XCTAssertEqual(
            recent(file, at: UInt64(17 * chunk), count: 100), Array(bytes[..<100]),
            "within reach, the window is kept for it")
    }

    func testNothingIsKeptBeforeAReaderStarts() {
        let bytes = pattern(0..<1000)
        let file = GrowingFile(expectedSize: 1000)
        bytes.withUnsafeBytes { file.advance(to: 1000, bytes: $0) }

        XCTAssertEqual(recent(file, at: 900, count: 100), [])
    }

    /// The reader's first call: from now on the copy keeps its bytes.
    private func startReading(_ file: GrowingFile) {
        var byte: UInt8 = 0
        _ = withUnsafeMutableBytes(of: &byte) { file.copyRecent(at: 0, into: $0) }
    }

    private func pattern(_ range: Range<Int>) -> [UInt8] {
        range.map { UInt8(truncatingIfNeeded: ($0 &* 2_654_435_761) >> 13) }
    }

    private func recent(_ file: GrowingFile, at offset: UInt64, count: Int) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        let taken = buffer.withUnsafeMutableBytes { file.copyRecent(at: offset, into: $0) }
        return Array(buffer.prefix(taken))
    }
}

func XCTAssertThrowsErrorAsync<T>(
    _ expression: @autoclosure () async throws -> T,
    file: StaticString = #filePath, line: UInt = #line,
    _ check: (any Error) -> Void = { _ in }
) async {
    do {
        _ = try await expression()
        XCTFail("no error was thrown", file: file, line: line)
    } catch {
        check(error)
    }
}
