import FerryCore
@testable import FerryOutbox
import Foundation
import GRDB
import Synchronization
import XCTest

/// A start on a database at the current schema takes its first shares without GRDB (ColdConnection);
/// what it commits reads back through GRDB exactly as GRDB's own insert would have left it.
final class ColdConnectionTests: XCTestCase {
    private var directory: TemporaryDirectory!
    private var path: String { directory.file("ferry.sqlite3") }

    override func setUpWithError() throws {
        directory = try TemporaryDirectory()
        _ = try Outbox(path: path) // the database made before: created and migrated
    }

    override func tearDown() {
        directory = nil
    }

    func testTheColdPathKnowsExactlyTheMigratorsMigrations() {
        XCTAssertEqual(OutboxSchema.identifiers, OutboxSchema.migrator.migrations)
    }

    func testSharesInsertedColdReadBackThroughGRDBAsTheyWere() throws {
        var suggested = SampleShares.link(id: "01kaaaaaaaaaaaaaaaaaaaaaa4", created: 4, state: .awaitingDestination)
        suggested.intent = ShareIntent(
            items: suggested.intent.items, subject: "Subject", message: nil, destinations: [],
            source: .uri, suggestedDestinations: ["#a:b", "@u:s"])
        var failed = SampleShares.text(id: "01kaaaaaaaaaaaaaaaaaaaaaa5", created: 5, state: .failed)
        failed.failure = Share.Failure(name: "io.github.ferryshare.Ferry.Error.StagingFailed", message: "Disk full.")
        var queued = SampleShares.link(id: "01kaaaaaaaaaaaaaaaaaaaaaa3", created: 3)
        queued.account = "@me:example.org"
        let shares = [
            SampleShares.files(id: "01kaaaaaaaaaaaaaaaaaaaaaa1"),
            SampleShares.text(id: "01kaaaaaaaaaaaaaaaaaaaaaa2", created: 2), queued, suggested, failed,
        ]
        let outbox = try Outbox(path: path)
        XCTAssertTrue(outbox.isCold)

        for share in shares { try outbox.insert(share) }

        XCTAssertTrue(outbox.isCold, "inserting needs no GRDB")
        for share in shares { XCTAssertEqual(try outbox.share(id: share.id), share) }
        XCTAssertFalse(outbox.isCold, "reading a share opened GRDB")
        XCTAssertNil(try outbox.share(id: shares[3].id)?.intent.message)
        XCTAssertEqual(try outbox.share(id: shares[3].id)?.intent.subject, "Subject")
    }

    func testAColdInsertLeavesTheSameRowsAsGRDBs() throws {
        let grdb = try Outbox(path: path)
        _ = try grdb.ids() // opens GRDB
        try grdb.insert(SampleShares.files(id: "01kaaaaaaaaaaaaaaaaaaaaaa1"))
        let cold = try Outbox(path: path)
        XCTAssertTrue(cold.isCold)

        try cold.insert(SampleShares.files(id: "01kaaaaaaaaaaaaaaaaaaaaaa2"))

        let rows = try cold.database.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM share ORDER BY id")
                + Row.fetchAll(db, sql: "SELECT * FROM share_item ORDER BY share_id, position")
        }
        let columns: [[DatabaseValue]] = rows.map { row in
            Array(row.columnNames.filter { $0 != "id" && $0 != "share_id" }).map { row[$0] as DatabaseValue }
        }
        XCTAssertEqual(columns[0], columns[1])
        XCTAssertEqual(Array(columns[2...4]), Array(columns[5...7]))
        withExtendedLifetime(grdb) {}
    }

    func testTheAccountReadsTheSameColdAndThroughGRDB() throws {
        let account = StoredAccount(
            userID: "@me:example.org", homeserver: "https://example.org", deviceID: "DEV",
            signedIn: true, secretStorage: "file", signIn: 7)
        try Outbox(path: path).save(account: account)
        let cold = try Outbox(path: path)
        XCTAssertTrue(cold.isCold)

        XCTAssertEqual(try cold.account(), account)

        _ = try cold.ids()
        XCTAssertFalse(cold.isCold)
        XCTAssertEqual(try cold.account(), account)
    }

    func testNoAccountIsNilOnTheColdPath() throws {
        let cold = try Outbox(path: path)

        XCTAssertNil(try cold.account())
        XCTAssertTrue(cold.isCold)
    }

    func testAFailedColdInsertSaysWhyAsGRDBWouldAndLeavesNoTransactionOpen() throws {
        let share = SampleShares.files(id: "01kaaaaaaaaaaaaaaaaaaaaaa1")
        let cold = try Outbox(path: path)
        try cold.insert(share)
        let again = SampleShares.text(id: share.id, created: 9)

        var coldReason: String?
        XCTAssertThrowsError(try cold.insert(again)) { coldReason = ($0 as? OutboxError)?.reason }

        XCTAssertEqual(coldReason, "UNIQUE constraint failed: share.id")
        // Rolled back: a new transaction begins.
        try cold.insert(SampleShares.text(id: "01kaaaaaaaaaaaaaaaaaaaaaa2", created: 1))
        XCTAssertTrue(cold.isCold)
        XCTAssertEqual(try cold.share(id: share.id), share)
        XCTAssertThrowsError(try cold.insert(again)) {
            XCTAssertEqual(($0 as? OutboxError)?.reason, coldReason, "GRDB says the same")
        }
    }

    func testANewDatabaseTakesTheMigratorAtOnce() throws {
        let fresh = try Outbox(path: directory.file("fresh.sqlite3"))

        XCTAssertFalse(fresh.isCold)
        XCTAssertEqual(
            try fresh.database.read { db in try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations") },
            OutboxSchema.identifiers)
    }

    func testADatabaseAtAnOlderSchemaIsMigratedAtOnce() throws {
        let olderPath = directory.file("older.sqlite3")
        let older = try DatabaseQueue(path: olderPath)
        try OutboxSchema.migrator.migrate(older, upTo: "v4: suggested destinations")
        try older.close()

        let outbox = try Outbox(path: olderPath)

        XCTAssertFalse(outbox.isCold)
        try outbox.insert(SampleShares.link(id: "01kaaaaaaaaaaaaaaaaaaaaaa1", created: 1))
        XCTAssertEqual(try outbox.ids(), ["01kaaaaaaaaaaaaaaaaaaaaaa1"])
    }

    func testADatabaseANewerFerryMigratedFurtherIsNotOpenedCold() throws {
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v99: from the future')")
        }

        XCTAssertNil(try ColdConnection(path: path))
    }

    func testConcurrentColdInsertsAllLand() throws {
        let outbox = try Outbox(path: path)
        let ids = (0..<40).map { String(format: "01kaaaaaaaaaaaaaaaaaaaa%03d", $0) }

        let failures = Mutex<[String]>([])

        DispatchQueue.concurrentPerform(iterations: ids.count) { index in
            do {
                try outbox.insert(SampleShares.text(id: ids[index], created: Int64(index)))
                // Halfway, a read opens GRDB: the inserts still under way finish on one or the other.
                if index == ids.count / 2 { _ = try outbox.ids() }
            } catch {
                failures.withLock { $0.append("\(ids[index]): \(error)") }
            }
        }

        XCTAssertEqual(failures.withLock { $0 }, [])
        XCTAssertEqual(try outbox.ids(), Set(ids))
        XCTAssertEqual(try Outbox(path: path).ids(), Set(ids))
    }
}

final class NewlineSeparatedTests: XCTestCase {
    func testItJoinsAsJoinedWould() {
        for list in [[], [""], ["", ""], ["a"], ["!a:b", "#c:d", "@e:f"], ["a", "", "b"]] {
            XCTAssertEqual(newlineSeparated(list), list.joined(separator: "\n"), "\(list)")
        }
    }
}
