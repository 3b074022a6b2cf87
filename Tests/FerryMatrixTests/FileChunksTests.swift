import FerryCore
import Foundation
@testable import FerryMatrix
import NIOConcurrencyHelpers
import NIOCore
import XCTest

/// An upload's body is the file, byte for byte: a large file read past the page cache in
/// block-aligned reads with an unaligned tail, and never beyond what a growing file has.
final class FileChunksTests: XCTestCase {
    private let large = (0..<(9 << 20) + 4097).map { UInt8(truncatingIfNeeded: ($0 &* 2_654_435_761) >> 13) }

    func testALargeFileIsReadWholeWhereDirectReadsWork() async throws {
        let path = try write(large, under: FileManager.default.temporaryDirectory.path)
        let read = try await readAll(FileChunks(path: path, size: UInt64(large.count), available: nil, progress: { _ in }))
        XCTAssertEqual(read, large)
    }

    func testAGrowingFileIsNeverReadPastWhatIsAvailable() async throws {
        let path = try write(large, under: FileManager.default.temporaryDirectory.path)
        // The writer is "at" 3 MiB + 5 bytes, then done: each chunk may end at that mark, none past it.
        // The read after the mark starts at an offset O_DIRECT refuses (not a whole block), so the
        // rest comes through the page cache: the fallback for direct reads is exercised too.
        let mark = UInt64(3 << 20) + 5
        let asked = Asked()
        let total = UInt64(large.count)
        let chunks = FileChunks(path: path, size: total, available: { read in
            await asked.add(read)
            return read < mark ? mark : total
        }, progress: { _ in })

        let read = try await readAll(chunks)

        XCTAssertEqual(read, large)
        let offsets = await asked.offsets
        XCTAssertTrue(offsets.contains(mark), "a chunk should have stopped at the mark: \(offsets)")
    }

    func testATransformOfAGrowingFileGetsWholeBlocksUntilTheLastChunk() async throws {
        let path = try write(large, under: FileManager.default.temporaryDirectory.path)
        // The writer moves on in steps that are not whole 16-byte blocks (5 bytes, then 3 MiB + 5,
        // then 3 MiB + 9, …): the transform (an AES-CTR encryption) must still see whole blocks.
        let total = UInt64(large.count)
        let marks: [UInt64] = [5, (3 << 20) + 5, (3 << 20) + 9, (6 << 20) + 1, total]
        let sizes = NIOLockedValueBox<[Int]>([])
        var chunks = FileChunks(path: path, size: total, available: { read in
            marks.first { $0 > read } ?? total
        }, progress: { _ in })
        chunks.transform = { buffer in
            sizes.withLockedValue { $0.append(buffer.count) }
            for index in buffer.indices { buffer[index] ^= 0x5A }
        }

        let read = try await readAll(chunks)

        XCTAssertEqual(read, large.map { $0 ^ 0x5A })
        let seen = sizes.withLockedValue { $0 }
        XCTAssertTrue(seen.dropLast().allSatisfy { $0 % 16 == 0 && $0 > 0 }, "chunks before the last: \(seen)")
        XCTAssertEqual(seen.reduce(0, +), large.count)
    }

    private func readAll(_ chunks: FileChunks) async throws -> [UInt8] {
        var bytes: [UInt8] = []
        for try await var chunk in chunks { bytes += chunk.readBytes(length: chunk.readableBytes) ?? [] }
        return bytes
    }

    private func write(_ bytes: [UInt8], under directory: String) throws -> String {
        let path = directory + "/ferry-chunks-\(UUID().uuidString)"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        addTeardownBlock { try? FileManager.default.removeItem(atPath: path) }
        return path
    }
}

private actor Asked {
    var offsets: [UInt64] = []
    func add(_ offset: UInt64) { offsets.append(offset) }
}
