import FerryCore
import FerryOutbox
import Foundation
import GRDB
import XCTest

/// The outbox on disk: private, in WAL mode, in the documented shape, and still there after a restart.
final class OutboxFileTests: XCTestCase {
    private var directory: TemporaryDirectory!
    private var path: String { directory.file("ferry.sqlite3") }

    override func setUpWithError() throws {
        directory = try TemporaryDirectory()
    }

    override func tearDown() {
        directory = nil
    }

    func testANewOutboxFindsEverythingTheLastOneCommitted() throws {
        let first = SampleShares.files(id: "01kaaaaaaaaaaaaaaaaaaaaaa1", created: 1_000)
        let second = SampleShares.link(id: "01kaaaaaaaaaaaaaaaaaaaaaa2", created: 2_000)
        var before: Outbox? = try Outbox(path: path)
        try before?.insert(first)
        try before?.insert(second)
        try before?.update(id: second.id, state: .sending, at: 3_000)
        let expected = try before?.shares()
        before = nil // the service stops

        let after = try Outbox(path: path)

        XCTAssertEqual(try after.shares(), expected)
        XCTAssertEqual(try after.share(id: second.id)?.state, .sending)
        XCTAssertEqual(try after.share(id: first.id), first)
    }

    func testACommittedShareIsVisibleToAnotherConnectionAtOnce() throws {
        let writer = try Outbox(path: path)
        let share = SampleShares.text(id: "01kaaaaaaaaaaaaaaaaaaaaaa1", created: 1)

        try writer.insert(share)

        let reader = try Outbox(path: path)
        XCTAssertEqual(try reader.share(id: share.id), share)
        withExtendedLifetime(writer) {}
    }

    func testTheDatabaseAndItsWALAndSharedMemoryFilesArePrivate() throws {
        let outbox = try Outbox(path: path)
        try outbox.insert(SampleShares.text(id: "01kaaaaaaaaaaaaaaaaaaaaaa1", created: 1))

        for file in [path, path + "-wal", path + "-shm"] {
            XCTAssertEqual(try permissions(of: file), 0o600, file)
        }
        withExtendedLifetime(outbox) {}
    }

    func testAnExistingDatabaseFileIsMadePrivate() throws {
        let made = FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o644])
        XCTAssertTrue(made)

        _ = try Outbox(path: path)

        XCTAssertEqual(try permissions(of: path), 0o600)
    }

    func testTheJournalModeIsWAL() throws {
        let outbox = try Outbox(path: path)
        try outbox.insert(SampleShares.text(id: "01kaaaaaaaaaaaaaaaaaaaaaa1", created: 1))

        var configuration = Configuration()
        configuration.readonly = true
        let mode = try DatabaseQueue(path: path, configuration: configuration).read { db in
            try String.fetchOne(db, sql: "PRAGMA journal_mode")
        }

        XCTAssertEqual(mode, "wal")
        withExtendedLifetime(outbox) {}
    }

    func testTablesHaveTheColumnsTheContractDocuments() throws {
        let outbox = try Outbox(path: path)
        var configuration = Configuration()
        configuration.readonly = true
        let database = try DatabaseQueue(path: path, configuration: configuration)
        let contract = try String(
            contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
                .appendingPathComponent("../../docs/CONTRACT.md"), encoding: .utf8)

        for table in ["share", "share_item"] {
            let columns = try database.read { db in try db.columns(in: table).map(\.name) }

            XCTAssertEqual(columns, try documentedColumns(of: table, in: contract), table)
        }
        withExtendedLifetime(outbox) {}
    }

    // MARK: Helpers

    private func permissions(of file: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: file)
        return (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }

    /// The column list in "`table(a, b, c)`" in docs/CONTRACT.md.
    private func documentedColumns(of table: String, in contract: String) throws -> [String] {
        let start = try XCTUnwrap(contract.range(of: "`" + table + "("), "\(table) is documented")
        let end = try XCTUnwrap(contract[start.upperBound...].firstIndex(of: ")"))
        return contract[start.upperBound..<end].split(separator: ",").map {
            $0.trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }
}
