import FerryCore
@testable import FerryStaging
import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// The ways a copy falls back when the kernel's cheaper ones are refused: the bytes still arrive
/// whole, in place, and whoever reads the copy as it grows hears each chunk's bytes.
final class FileCopyTests: XCTestCase {
    func testWhatCopyFileRangeRefusesIsCopiedByReadAndWriteAndItsBytesAreHeard() throws {
        // A pipe: no clone, no size to choose a direct copy by, and copy_file_range refuses it.
        let workspace = try StagingWorkspace()
        let bytes = pattern(0..<(3 << 20) + 123)
        var ends: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&ends), 0)
        let (reading, writing) = (ends[0], ends[1])
        // Should the copy fail early, closing the pipe stops the feeder with EPIPE, not a signal.
        signal(SIGPIPE, SIG_IGN)
        let fed = DispatchSemaphore(value: 0)
        let feeder = Thread {
            bytes.withUnsafeBytes { raw in
                var sent = 0
                while sent < raw.count {
                    let count = write(writing, raw.baseAddress! + sent, raw.count - sent)
                    if count <= 0 { break }
                    sent += count
                }
            }
            close(writing)
            fed.signal()
        }
        feeder.start()
        defer {
            close(reading)
            fed.wait()
        }
        let target = open(workspace.path + "/copy", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        XCTAssertGreaterThanOrEqual(target, 0)

        var heard: [UInt8] = []
        var totals: [UInt64] = []
        let total = try FileCopy.copy(from: reading, to: target, limit: 1 << 30) { total, chunk in
            heard += chunk
            totals.append(total)
        }
        close(target)

        XCTAssertEqual(total, UInt64(bytes.count))
        XCTAssertTrue(
            try Data(contentsOf: URL(fileURLWithPath: workspace.path + "/copy")) == Data(bytes),
            "the copy is not the bytes sent")
        XCTAssertTrue(heard == bytes, "the bytes heard along the way are not the bytes copied")
        XCTAssertEqual(totals.last, total)
        XCTAssertEqual(totals, totals.sorted())
    }

    func testAChunkTheFileSystemRefusesToWriteDirectlyIsWrittenAgainFromItsStart() throws {
        // A file system that takes the O_DIRECT flag and then refuses the write is rare; an
        // unaligned position is refused the same way (EINVAL), so the target's position starts
        // at byte 100 instead of 0. The retry writes the chunk again where the copy's own count
        // says it belongs (the target is empty at the start, so at byte 0), not on from wherever
        // the refused write left the position.
        let workspace = try StagingWorkspace()
        try XCTSkipUnless(refusesUnalignedDirectWrites(workspace.path), "this file system does not refuse them")
        let bytes = pattern(0..<(3 << 20) + 5)
        let source = open(try workspace.write("original", bytes), O_RDONLY | O_CLOEXEC)
        defer { close(source) }
        let target = open(workspace.path + "/copy", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        defer { close(target) }
        XCTAssertEqual(lseek(target, 100, SEEK_SET), 100)

        var heard: [UInt8] = []
        let total = try DirectCopy.copy(from: source, to: target, limit: 1 << 30) { _, chunk in heard += chunk }

        XCTAssertEqual(total, UInt64(bytes.count))
        let copy = try Data(contentsOf: URL(fileURLWithPath: workspace.path + "/copy"))
        XCTAssertEqual(copy.count, bytes.count, "the chunk was written again somewhere else than its start")
        XCTAssertTrue(copy == Data(bytes), "the copy is not the original")
        XCTAssertTrue(heard == bytes)
    }

    /// Whether an O_DIRECT write at an unaligned position in `directory` fails with EINVAL (ext4,
    /// XFS) rather than going through the page cache (btrfs, tmpfs).
    private func refusesUnalignedDirectWrites(_ directory: String) -> Bool {
        guard supportsDirectIO(directory) else { return false }
        let probe = directory + "/unaligned-probe"
        let fd = open(probe, O_WRONLY | O_CREAT | DirectIO.flag, 0o600)
        defer {
            close(fd)
            unlink(probe)
        }
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: 4096, alignment: 4096)
        defer { buffer.deallocate() }
        return fd >= 0 && pwrite(fd, buffer, 4096, 100) < 0 && errno == EINVAL
    }

    private func pattern(_ range: Range<Int>) -> [UInt8] {
        range.map { UInt8(truncatingIfNeeded: ($0 &* 2_654_435_761) >> 13) }
    }
}
