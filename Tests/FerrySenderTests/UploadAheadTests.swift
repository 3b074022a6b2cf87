import FerryCore
import FerryMatrix
import FerryOutbox
import FerryStaging
import Foundation
import Logging
import XCTest
@testable import FerrySender

/// The sender's early upload of a file still being copied into the spool, against an in-memory
/// homeserver.
final class UploadAheadTests: XCTestCase {
    private var root: URL!

    override func setUpWithError() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent(
            "ferry-upload-ahead-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: root)
    }

    func testAnEarlyUploadThatFailsHalfWayLetsTheCopysMemoryGoAtOnce() async throws {
        let room = "!room:memory.test"
        let server = InMemoryHomeserver(rooms: [room])
        server.failUploadsAfterReading()
        let sender = try sender(server)
        let chunk = 1 << 20
        let item = ShareItem(
            kind: .file, name: "big.bin", contentType: "application/octet-stream",
            size: 1 << 30, uri: "file:///tmp/big.bin")
        let file = try XCTUnwrap(
            sender.uploadingAhead(as: "@me:memory.test").begin(
                shareID: "s1", position: 0, path: root.path + "/big.bin", item: item,
                destinations: [room]))
        let bytes = [UInt8](repeating: 7, count: chunk)

        // The upload asks the server about the room first; the copy keeps bytes only once it reads.
        try await waitUntil { server.uploadsBegun > 0 }
        // The copy goes on until the upload took some bytes from its memory, and then failed.
        var written = 0
        while server.bytesFromMemory == 0, written < Int(item.size) {
            written += chunk
            bytes.withUnsafeBytes { file.advance(to: UInt64(written), bytes: $0) }
            try await Task.sleep(nanoseconds: 2_000_000)
        }
        XCTAssertGreaterThan(server.bytesFromMemory, 0, "the upload never read from the copy's memory")
        let last = UInt64(written - 100)
        // Before the sender takes up the share, the copy keeps nothing for a reader that is gone.
        try await waitUntil("the copy still holds bytes for a failed upload") { self.recent(file, at: last) == 0 }
        let uri = await sender.earlyUpload(
            shareID: "s1", position: 0, as: "@me:memory.test", encrypted: false, progress: { _ in })
        XCTAssertNil(uri)
    }

    /// How many bytes at `offset` the copy's memory still holds (at most 100).
    private func recent(_ file: GrowingFile, at offset: UInt64) -> Int {
        var buffer = [UInt8](repeating: 0, count: 100)
        return buffer.withUnsafeMutableBytes { file.copyRecent(at: offset, into: $0) }
    }

    private func sender(_ server: InMemoryHomeserver) throws -> Sender {
        .inMemory(
            outbox: try Outbox(path: root.appendingPathComponent("ferry.sqlite3").path),
            spool: try Spool(root: root.appendingPathComponent("spool").path), server: server)
    }
}
