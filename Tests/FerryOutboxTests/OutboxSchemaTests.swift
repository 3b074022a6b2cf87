@testable import FerryOutbox
import GRDB
import XCTest

/// A database is brought up to date however far an earlier Ferry took it; one that is up to date
/// already opens as it is (every reopening test in OutboxFileTests goes that way).
final class OutboxSchemaTests: XCTestCase {
    func testADatabaseAnOlderFerryLeftIsUpgradedInPlaceKeepingItsShares() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("ferry.sqlite3")
        // Given a database with only the first migration applied, and a share in it.
        let older = try DatabaseQueue(path: path)
        try OutboxSchema.migrator.migrate(older, upTo: "v1: shares and items")
        try older.write { db in
            try db.execute(
                sql: """
                    INSERT INTO share (id, state, action, content_type, destinations, source, created_at, updated_at)
                    VALUES ('01kaaaaaaaaaaaaaaaaaaaaaa1', 'queued', 'send', 'text/plain', '', 'share', 1, 1)
                    """)
        }
        try older.close()

        let outbox = try Outbox(path: path)

        let applied = try outbox.database.read { db in
            try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations")
        }
        XCTAssertEqual(applied, OutboxSchema.migrator.migrations)
        XCTAssertTrue(try outbox.database.read { try $0.tableExists("delivery") })
        XCTAssertEqual(try outbox.ids(), ["01kaaaaaaaaaaaaaaaaaaaaaa1"])
    }
}
