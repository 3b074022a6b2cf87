import GRDB
import GRDBSQLite

/// The outbox's first connection at a start, over SQLite's C API: what the first share of a cold
/// start needs (the account, one insert) without GRDB. Opening GRDB's queue and running its
/// migrator instantiates generic types whose protocol conformances the Swift runtime finds by
/// scanning every conformance record of the binary, which was most of a cold start's
/// instructions before its first reply (callgrind).
///
/// Only for a database whose migrations are exactly the ones this Ferry knows: anything else
/// (a new file, an older or newer schema) goes to GRDB and its migrator at once. Same settings as
/// GRDB's connection (Outbox.init): WAL, synchronous=FULL, a 5 s busy timeout, foreign keys on.
/// Not thread-safe: the outbox uses it with its connection lock held.
// @unchecked Sendable: only ever used with the outbox's connection lock held (Outbox.whileCold).
final class ColdConnection: @unchecked Sendable {
    private let handle: OpaquePointer

    /// The connection, or nil when the database is not exactly at OutboxSchema.identifiers.
    init?(path: String) throws {
        var opened: OpaquePointer?
        let code = sqlite3_open_v2(
            path, &opened, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | 0x0200_0000 /* EXRESCODE */, nil)
        guard let opened else { throw DatabaseError(resultCode: ResultCode(rawValue: code), message: "out of memory") }
        handle = opened
        guard code == SQLITE_OK else { throw failure(code) }
        sqlite3_busy_timeout(handle, 5000)
        try execute("PRAGMA journal_mode = WAL")
        try execute("PRAGMA synchronous = FULL")
        try execute("PRAGMA foreign_keys = ON")
        // No grdb_migrations table (a file just created) fails to prepare: not current either.
        guard let applied = try? strings("SELECT identifier FROM grdb_migrations"),
            applied.sorted() == OutboxSchema.identifiers.sorted()
        else {
            return nil
        }
    }

    deinit { sqlite3_close_v2(handle) }

    /// The first row of `sql`, its columns in order (integers and text: what the outbox keeps).
    func firstRow(_ sql: String) throws -> [SQLValue]? {
        try rows(sql).first
    }

    /// Every row of `sql`, each its columns in order (integers and text: what the outbox keeps).
    func rows(_ sql: String) throws -> [[SQLValue]] {
        try query(sql, values: []) { statement -> [SQLValue] in
            (0..<sqlite3_column_count(statement)).map { column -> SQLValue in
                switch sqlite3_column_type(statement, column) {
                case SQLITE_NULL: .null
                case SQLITE_INTEGER: .integer(sqlite3_column_int64(statement, column))
                default: SQLValue(sqlite3_column_text(statement, column).map { String(cString: $0) })
                }
            }
        }
    }

    /// Runs the statements in one transaction: committed (on disk: synchronous=FULL) or not at all.
    func insert(_ rows: [(sql: String, values: [SQLValue])]) throws {
        try execute("BEGIN IMMEDIATE")
        do {
            for row in rows { _ = try query(row.sql, values: row.values) { _ in () } }
            try execute("COMMIT")
        } catch {
            // Rolls back whatever the failed statement left (a failed COMMIT included).
            if sqlite3_get_autocommit(handle) == 0 { _ = sqlite3_exec(handle, "ROLLBACK", nil, nil, nil) }
            throw error
        }
    }

    private func execute(_ sql: String) throws {
        let code = sqlite3_exec(handle, sql, nil, nil, nil)
        guard code == SQLITE_OK else { throw failure(code) }
    }

    private func strings(_ sql: String) throws -> [String] {
        try query(sql, values: []) { statement in sqlite3_column_text(statement, 0).map { String(cString: $0) } ?? "" }
    }

    /// Runs one statement with `values` for its parameters; `row` reads each result row.
    private func query<T>(_ sql: String, values: [SQLValue], row: (OpaquePointer) -> T) throws -> [T] {
        var prepared: OpaquePointer?
        let code = sqlite3_prepare_v2(handle, sql, -1, &prepared, nil)
        guard code == SQLITE_OK, let statement = prepared else { throw failure(code) }
        defer { sqlite3_finalize(statement) }
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let bound =
                switch value {
                case .text(let text): sqlite3_bind_text(statement, index, text, -1, transient)
                case .integer(let number): sqlite3_bind_int64(statement, index, number)
                case .null: sqlite3_bind_null(statement, index)
                }
            guard bound == SQLITE_OK else { throw failure(bound) }
        }
        var rows: [T] = []
        while true {
            let step = sqlite3_step(statement)
            if step == SQLITE_DONE { return rows }
            guard step == SQLITE_ROW else { throw failure(step) }
            rows.append(row(statement))
        }
    }

    /// GRDB's own error type, so that OutboxError says the same on either path.
    private func failure(_ code: Int32) -> DatabaseError {
        DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(handle)))
    }
}

/// SQLITE_TRANSIENT (a macro Swift does not import): SQLite copies the bound text.
private let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)
