import FerryCore
import FerryOutbox
import Foundation
import Testing

/// What the outbox throws: its own OutboxError, in the database's words and never with a share's
/// text, the same whether GRDB or the cold connection (a start on a current database) failed.
struct OutboxErrorTests {
    /// A share whose text would leak if the statement were part of the error.
    private func secretShare() -> Share {
        let intent = ShareIntent(
            items: [.text("the secret words")], subject: nil, message: nil, destinations: [], source: .share)
        return Share(id: "01kaaaaaaaaaaaaaaaaaaaaaa9", intent: intent, state: .awaitingSignIn, created: 1, updated: 1)
    }

    @Test("a failed insert says why in SQLite's words, with its code, without the share's text")
    func failedInsert() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("ferry.sqlite3")
        let share = secretShare()
        let warm = try Outbox(path: path)
        try warm.insert(share)
        _ = try warm.shares() // opens GRDB, as a running service has
        let grdb = #expect(throws: OutboxError.self) { try warm.insert(share) }
        // A second outbox on the same (now current) file starts on the cold connection.
        let cold = try Outbox(path: path)
        let first = #expect(throws: OutboxError.self) { try cold.insert(share) }
        for error in [grdb, first].compactMap(\.self) {
            #expect(error.reason.contains("UNIQUE constraint failed"), "\(error)")
            #expect(error.code == 1555 || error.code == 2067, "SQLITE_CONSTRAINT_PRIMARYKEY or _UNIQUE")
            #expect(!"\(error)".contains("secret"))
            #expect(!"\(error)".contains("INSERT"))
        }
        #expect(grdb?.reason == first?.reason)
    }

    @Test("a database that cannot be created is said with its path, before SQLite")
    func uncreatable() throws {
        let directory = try TemporaryDirectory()
        let error = #expect(throws: OutboxError.self) { try Outbox(path: directory.file("missing/ferry.sqlite3")) }
        #expect(error?.code == nil)
        #expect(error?.reason.contains("cannot create") == true)
        #expect(error?.reason.contains("missing/ferry.sqlite3") == true)
    }

    @Test("a database path that is a symbolic link is refused, and the sentence says to move it")
    func symbolicLink() throws {
        let directory = try TemporaryDirectory()
        try FileManager.default.createSymbolicLink(
            atPath: directory.file("ferry.sqlite3"), withDestinationPath: directory.file("elsewhere"))
        let error = #expect(throws: OutboxError.self) { try Outbox(path: directory.file("ferry.sqlite3")) }
        #expect(error?.reason.contains("symbolic link") == true)
        #expect(!FileManager.default.fileExists(atPath: directory.file("elsewhere")))
    }
}
