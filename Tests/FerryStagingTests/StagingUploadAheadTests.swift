import FerryCore
import FerryStaging
import Foundation
import NIOConcurrencyHelpers
import XCTest

/// The stager tells whoever uploads ahead about each local file before copying it, keeps it
/// informed while copying, and tells it to abandon the share when staging fails.
final class StagingUploadAheadTests: XCTestCase {
    private var workspace: StagingWorkspace!

    override func setUpWithError() throws { workspace = try StagingWorkspace() }
    override func tearDown() { workspace = nil }

    func testEachFileIsAnnouncedWithItsSniffedTypeAndSizeAndItsCopyIsReadableWhole() async throws {
        // A PNG named .bin: the announced type is sniffed from the bytes, as the item's is.
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 7, count: (2 << 20) + 5)
        let picture = try workspace.write("picture.bin", png)
        let recorder = RecordingUploadAhead()
        let plan = try SharePlan(
            request: ShareRequest(
                uris: [fileURI(picture)], text: "hi", destinations: ["!room:ferry.test"],
                source: .share), limits: Limits())

        let items = try workspace.stager().stage(plan, shareID: "01kahead1", ahead: recorder)
        XCTAssertEqual(recorder.begun.count, 1)

        XCTAssertEqual(recorder.begun.count, 1)
        let begun = try XCTUnwrap(recorder.begun.first)
        XCTAssertEqual(begun.shareID, "01kahead1")
        XCTAssertEqual(begun.path, workspace.spool.path(for: "01kahead1", position: 0))
        XCTAssertEqual(begun.destinations, ["!room:ferry.test"])
        XCTAssertEqual(begun.item.contentType, "image/png")
        XCTAssertEqual(begun.item.size, UInt64(png.count))
        XCTAssertEqual(items.first { $0.kind == .file }, begun.item)
        // The copy told the reader it ended, at the size announced.
        try await begun.file.completed()
        XCTAssertEqual(recorder.abandoned, [])
    }

    func testAFileGrowingPastTheLimitWhileCopiedFailsTheCopyBeingReadAndAbandonsTheShare() async throws {
        let limits = Limits(maxFileSize: 1 << 20)
        let original = try workspace.write("growing.bin", Array(repeating: 1, count: 1 << 20))
        let plan = try SharePlan(request: ShareRequest(uris: [fileURI(original)], source: .open), limits: limits)
        // Between the checks and the copy, something appends to the original.
        let recorder = RecordingUploadAhead {
            let handle = FileHandle(forWritingAtPath: original)!
            handle.seekToEndOfFile()
            handle.write(Data(repeating: 2, count: 4096))
            try? handle.close()
        }

        XCTAssertThrowsError(try workspace.stager(limits).stage(plan, shareID: "01kahead2", ahead: recorder)) { error in
            guard case .fileTooLarge = error as? StagingError else { return XCTFail("\(error)") }
        }

        XCTAssertEqual(recorder.abandoned, ["01kahead2"])
        XCTAssertFalse(exists(workspace.spool.directory(for: "01kahead2")))
        let begun = try XCTUnwrap(recorder.begun.first)
        await XCTAssertThrowsErrorAsync(try await begun.file.completed()) { error in
            XCTAssertEqual(error as? GrowingFile.Failure, .abandoned)
        }
    }

    func testAnUploadReadingAlongTakesFromMemoryExactlyWhatTheCopyWrote() async throws {
        // Large enough to be written past the page cache (DirectCopy), with a tail that is not a
        // whole number of blocks (written the usual way): both pass their bytes on.
        guard supportsDirectIO(workspace.spool.root), !clones(workspace.spool.root) else {
            throw XCTSkip("the copy passes through memory only where direct I/O is taken and files are not cloned")
        }
        let size = Int(DirectIO.minimumSize) + (3 << 20) + 4097
        let bytes = (0..<size).map { UInt8(truncatingIfNeeded: ($0 &* 2_654_435_761) >> 13) }
        let original = try workspace.write("large.bin", bytes)
        let reader = ReadingUploadAhead()
        let plan = try SharePlan(
            request: ShareRequest(
                uris: [fileURI(original)], destinations: ["!room:ferry.test"],
                source: .share), limits: Limits())

        _ = try workspace.stager().stage(plan, shareID: "01kahead4", ahead: reader)

        let (read, fromMemory) = try await XCTUnwrap(reader.reading).value
        let staged = try XCTUnwrap(
            FileManager.default.contents(atPath: workspace.spool.path(for: "01kahead4", position: 0)))
        XCTAssertEqual(staged, Data(bytes))
        XCTAssertTrue(read == staged, "what the upload read is not the staged copy")
        XCTAssertEqual(fromMemory, size, "every byte taken from the copy's memory")
    }

    func testNothingIsAnnouncedForTextsAndLinks() throws {
        let recorder = RecordingUploadAhead()
        let plan = try SharePlan(
            request: ShareRequest(
                text: "https://example.org", destinations: ["!room:ferry.test"],
                source: .share), limits: Limits())

        _ = try workspace.stager().stage(plan, shareID: "01kahead3", ahead: recorder)

        XCTAssertEqual(recorder.begun.count, 0)
    }
}

/// Records what the stager says, and reads nothing.
final class RecordingUploadAhead: UploadAhead {
    struct Begun {
        let shareID: String
        let path: String
        let item: ShareItem
        let destinations: [String]
        let file: GrowingFile
    }

    private let state = NIOLockedValueBox<(begun: [Begun], abandoned: [String])>(([], []))
    private let onBegin: @Sendable () -> Void

    init(onBegin: @escaping @Sendable () -> Void = {}) { self.onBegin = onBegin }

    var begun: [Begun] { state.withLockedValue { $0.begun } }
    var abandoned: [String] { state.withLockedValue { $0.abandoned } }

    func begin(shareID: String, position: Int, path: String, item: ShareItem, destinations: [String]) -> GrowingFile? {
        let file = GrowingFile(expectedSize: item.size)
        state.withLockedValue {
            $0.begun.append(Begun(shareID: shareID, path: path, item: item, destinations: destinations, file: file))
        }
        onBegin()
        return file
    }

    func abandon(shareID: String) { state.withLockedValue { $0.abandoned.append(shareID) } }
}

/// Reads each file as it is copied, the way an upload does: from the copy's memory where it can,
/// else from the staged file. (Patient with a slow test reader: the copy waits for it.)
final class ReadingUploadAhead: UploadAhead, @unchecked Sendable {
    private(set) var reading: Task<(Data, Int), any Error>?

    func begin(shareID: String, position: Int, path: String, item: ShareItem, destinations: [String]) -> GrowingFile? {
        let file = GrowingFile(expectedSize: item.size, patienceMilliseconds: 10_000, readerShare: 0)
        var byte: UInt8 = 0
        _ = withUnsafeMutableBytes(of: &byte) { file.copyRecent(at: 0, into: $0) }
        reading = Task {
            var read = Data()
            var fromMemory = 0
            var buffer = [UInt8](repeating: 0, count: 512 << 10)
            while UInt64(read.count) < item.size {
                let readable = try await file.available(after: UInt64(read.count))
                let wanted = min(buffer.count, Int(readable) - read.count)
                var count = buffer.withUnsafeMutableBytes {
                    file.copyRecent(
                        at: UInt64(read.count), into: UnsafeMutableRawBufferPointer(rebasing: $0[..<wanted]))
                }
                if count > 0 {
                    fromMemory += count
                } else {
                    let handle = try XCTUnwrap(FileHandle(forReadingAtPath: path))
                    try handle.seek(toOffset: UInt64(read.count))
                    let chunk = handle.readData(ofLength: wanted)
                    try handle.close()
                    chunk.copyBytes(to: &buffer, count: chunk.count)
                    count = chunk.count
                }
                read.append(contentsOf: buffer[..<count])
            }
            return (read, fromMemory)
        }
        return file
    }

    func abandon(shareID: String) {}
}
