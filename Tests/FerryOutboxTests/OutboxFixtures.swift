import FerryCore
@testable import FerryOutbox
import GRDB
import Foundation
import XCTest

/// A directory of its own for each test, removed afterwards.
final class TemporaryDirectory {
    let path: String

    init() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "ferry-outbox-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        path = url.path
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    func file(_ name: String) -> String { path + "/" + name }
}

/// Shares as the service makes them, with values chosen to catch lossy storage.
enum SampleShares {
    static func files(id: String, created: Int64 = 1_763_733_600_123_000, state: ShareState = .awaitingSignIn) -> Share
    {
        let items = [
            ShareItem(kind: .file, name: "a.png", contentType: "image/png", size: 1234, uri: "file:///home/me/a.png"),
            // Names are stored exactly, newlines and bidi overrides included.
            ShareItem(
                kind: .file, name: "evil\n\u{202E}gnp.exe", contentType: "application/x-ms-dos-executable",
                size: 4 << 30, uri: "file:///home/me/evil%0A%E2%80%AEgnp.exe"),
            ShareItem(kind: .file, name: "b.jpg", contentType: "image/jpeg", size: 1, uri: "sftp://host/b.jpg"),
        ]
        let intent = ShareIntent(
            items: items, subject: "Holiday", message: "Look at these",
            destinations: ["!room:example.org", "#a:b", "@u:s"], source: .cli)
        return Share(id: id, intent: intent, state: state, created: created, updated: created)
    }

    static func text(id: String, created: Int64, state: ShareState = .awaitingSignIn) -> Share {
        let intent = ShareIntent(
            items: [.text("Hello, café ✓")], subject: nil, message: nil, destinations: [], source: .share)
        return Share(id: id, intent: intent, state: state, created: created, updated: created)
    }

    static func link(id: String, created: Int64, state: ShareState = .queued) -> Share {
        let intent = ShareIntent(
            items: [.link("https://example.org/")], subject: nil, message: "Read this",
            destinations: ["!room"], source: .uri)
        return Share(id: id, intent: intent, state: state, created: created, updated: created)
    }
}

/// A test case with a fresh outbox in a temporary directory for each test.
class OutboxTestCase: XCTestCase {
    var directory: TemporaryDirectory!
    var outbox: Outbox!

    override func setUpWithError() throws {
        directory = try TemporaryDirectory()
        outbox = try Outbox(path: directory.file("ferry.sqlite3"))
    }

    override func tearDown() {
        outbox = nil
        directory = nil
    }

    /// The path of a database an older Ferry left: migrated up to `migration`, with what `write`
    /// puts in it. The test's own outbox is closed first (one writer per directory).
    func olderDatabase(
        _ name: String, upTo migration: String, _ write: (Database) throws -> Void
    ) throws -> String {
        outbox = nil
        let path = directory.file(name)
        let older = try DatabaseQueue(path: path)
        try OutboxSchema.migrator.migrate(older, upTo: migration)
        try older.write(write)
        try older.close()
        return path
    }
}
