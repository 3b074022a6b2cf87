import FerryCore
import FerryOutbox
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
}
