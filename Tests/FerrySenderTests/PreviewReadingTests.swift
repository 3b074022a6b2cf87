import FerryCore
import FerryMatrix
import FerryOutbox
import FerryStaging
import Foundation
import Synchronization
import XCTest
@testable import FerrySender

/// A file's reader runs once for the file, not once for each room it goes to: a photo shared to
/// three rooms is decoded once, and every room's event says what that one reading learnt.
final class PreviewReadingTests: SenderTestCase {
    /// A picture reader that says every picture is 4000 × 3000 with an 800 × 600 thumbnail, and
    /// counts how often it was asked.
    final class CountingReader: PictureReading {
        let reads = Mutex(0)
        func read(_ path: String, thumbnailPath: String) async -> PictureFacts? {
            reads.withLock { $0 += 1 }
            guard FileManager.default.createFile(atPath: thumbnailPath, contents: Data(count: 100)) else { return nil }
            return PictureFacts(
                width: 4000, height: 3000, thumbnail: .init(width: 800, height: 600, mimetype: "image/jpeg", size: 100))
        }
    }

    func testAPhotoSharedToThreeRoomsIsReadOnce() async throws {
        let server = InMemoryHomeserver(rooms: ["!a", "!b", "!c"])
        let reader = CountingReader()
        let session = Session(
            userID: "@me:memory.test", homeserver: "memory", deviceID: "D", accessToken: "t", signIn: 1)
        let sender = Sender(
            outbox: outbox, spool: spool, account: FixedSession(session: session),
            backoff: Backoff(initial: 1_000, maximum: 5_000), logger: TestLog.logger, clock: SystemClock.microseconds,
            connect: { _ in server }, pictures: reader)
        let id = "01kpreviews" + String(UUID().uuidString.lowercased().filter(\.isLetter).prefix(15))
        try FileManager.default.createDirectory(atPath: spool.directory(for: id), withIntermediateDirectories: true)
        XCTAssertTrue(
            FileManager.default.createFile(atPath: spool.path(for: id, position: 0), contents: Data(count: 4096)))
        let item = ShareItem(
            kind: .file, name: "harbour.jpg", contentType: "image/jpeg", size: 4096, uri: "file:///tmp/h")
        let intent = ShareIntent(
            items: [item], subject: nil, message: nil, destinations: ["!a", "!b", "!c"], source: .cli)
        try outbox.insert(Share(id: id, intent: intent, state: .queued, created: 1, updated: 1))

        sender.start()
        sender.wake()
        try await waitUntil { (try? self.outbox.state(of: id)) == .sent }

        XCTAssertEqual(reader.reads.withLock { $0 }, 1)
        for room in ["!a", "!b", "!c"] {
            let info = try XCTUnwrap(server.events(in: room).first?.info)
            XCTAssertEqual(info.w, 4000, room)
            XCTAssertEqual(info.thumbnailInfo?.w, 800, room)
        }
        // Three thumbnails went up, one for each room, besides the file.
        XCTAssertGreaterThanOrEqual(server.uploads, 4)
    }
}
