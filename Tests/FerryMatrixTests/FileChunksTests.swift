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
        let read = try await readAll(
            FileChunks(path: path, size: UInt64(large.count), available: nil, progress: { _ in }))
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
        let chunks = FileChunks(
            path: path, size: total,
            available: Growing { read in
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
        var chunks = FileChunks(
            path: path, size: total,
            available: Growing { read in
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

    func testBytesTheWriterStillHoldsAreTakenFromItAndTheRestFromTheFile() async throws {
        // On disk, the file's first 3 MiB only; the writer holds the bytes from 2 MiB to the end
        // in memory. Every byte arrives, those past 3 MiB without the file having them.
        let large = self.large
        let total = UInt64(large.count)
        let path = try write(Array(large[..<(3 << 20)]), under: FileManager.default.temporaryDirectory.path)
        let held = (2 << 20)...
        let taken = NIOLockedValueBox<[UInt64]>([])
        let chunks = FileChunks(
            path: path, size: total,
            available: Growing({ _ in total }) { offset, buffer in
                guard held.contains(Int(offset)) else { return 0 }
                let count = Swift.min(buffer.count, large.count - Int(offset))
                large.withUnsafeBytes {
                    buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[Int(offset)..<(Int(offset) + count)]))
                }
                taken.withLockedValue { $0.append(offset) }
                return count
            }, progress: { _ in })

        let read = try await readAll(chunks)

        XCTAssertEqual(read, large)
        XCTAssertEqual(
            taken.withLockedValue { $0.first }, 2 << 20, "nothing before the writer's bytes came from memory")
    }

    func testATransformGetsWholeBlocksWhenTheWriterHoldsFewerBytesThanAsked() async throws {
        // The writer holds only 1000 bytes at a time in memory (not a whole number of blocks):
        // what comes from memory is cut to whole blocks before the file's end.
        let large = self.large
        let path = try write(large, under: FileManager.default.temporaryDirectory.path)
        let total = UInt64(large.count)
        let sizes = NIOLockedValueBox<[Int]>([])
        var chunks = FileChunks(
            path: path, size: total,
            available: Growing({ _ in total }) { offset, buffer in
                let count = Swift.min(buffer.count, 1000, large.count - Int(offset))
                large.withUnsafeBytes {
                    buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[Int(offset)..<(Int(offset) + count)]))
                }
                return count
            }, progress: { _ in })
        chunks.transform = { buffer in
            sizes.withLockedValue { $0.append(buffer.count) }
            for index in buffer.indices { buffer[index] ^= 0x5A }
        }

        let read = try await readAll(chunks)

        XCTAssertTrue(read == large.map { $0 ^ 0x5A }, "the bytes read are not the file's")
        let seen = sizes.withLockedValue { $0 }
        XCTAssertTrue(
            seen.dropLast().allSatisfy { $0 % 16 == 0 && $0 > 0 }, "chunks before the last: \(seen.prefix(5))")
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

/// A file that grows as `marks` says; `recent` copies what its writer holds in memory (nothing,
/// unless given: the file is read).
private struct Growing: GrowingSource {
    let marks: @Sendable (UInt64) async throws -> UInt64
    let recent: @Sendable (UInt64, UnsafeMutableRawBufferPointer) -> Int
    init(
        _ marks: @escaping @Sendable (UInt64) async throws -> UInt64,
        recent: @escaping @Sendable (UInt64, UnsafeMutableRawBufferPointer) -> Int = { _, _ in 0 }
    ) {
        self.marks = marks
        self.recent = recent
    }
    func available(after offset: UInt64) async throws -> UInt64 { try await marks(offset) }
    func copyRecent(at offset: UInt64, into buffer: UnsafeMutableRawBufferPointer) -> Int { recent(offset, buffer) }
}

private actor Asked {
    var offsets: [UInt64] = []
    func add(_ offset: UInt64) { offsets.append(offset) }
}
