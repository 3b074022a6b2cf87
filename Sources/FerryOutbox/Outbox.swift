import FerryCore
import GRDB
import NIOConcurrencyHelpers

/// The durable list of shares: SQLite in WAL mode, synchronous=FULL, so a share that was
/// acknowledged survives a crash of the service and of the machine.
///
/// Every state change is committed here before the side effect it allows.
public final class Outbox: Sendable {
    private let path: String
    /// GRDB's queue once it is open; until then (a start on a database at the current schema)
    /// the cold connection. The lock also serializes every use of the cold connection.
    private let connection: NIOLockedValueBox<Connection>
    private let waiting = NIOLockedValueBox<[QueuedInsert]>([])

    private enum Connection: Sendable {
        case cold(ColdConnection)
        case open(DatabaseQueue)
    }

    /// Opens (or creates, 0600) the outbox at `path`; its directory must exist.
    ///
    /// A database at the current schema opens cold: SQLite alone, for the account and inserts,
    /// and GRDB (with its migrator, which then has nothing to do) at the first other call, so
    /// that a cold start's first share is answered without it. Any other file is migrated at once.
    public init(path: String) throws(OutboxError) {
        self.path = path
        do {
            try DatabaseFile.createPrivate(path)
            if let cold = try ColdConnection(path: path) {
                connection = NIOLockedValueBox(.cold(cold))
            } else {
                connection = NIOLockedValueBox(.open(try Self.openDatabase(path: path)))
            }
        } catch {
            throw OutboxError(error)
        }
    }

    private static func openDatabase(path: String) throws -> DatabaseQueue {
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA journal_mode = WAL")
            // FULL: the WAL is synced at every commit, so an acknowledged share survives power loss too.
            try db.execute(sql: "PRAGMA synchronous = FULL")
        }
        configuration.busyMode = .timeout(5)
        let database = try DatabaseQueue(path: path, configuration: configuration)
        try OutboxSchema.migrator.migrate(database)
        return database
    }

    /// GRDB's queue, opened at the first call that needs it; the cold connection closes then.
    var database: DatabaseQueue {
        get throws {
            try connection.withLockedValue { connection in
                if case .open(let database) = connection { return database }
                let database = try Self.openDatabase(path: path)
                connection = .open(database) // releases the cold connection, which closes
                return database
            }
        }
    }

    /// A read of the outbox; GRDB's errors become OutboxError here.
    func reading<T>(_ body: (Database) throws -> T) throws(OutboxError) -> T {
        do { return try database.read(body) } catch { throw OutboxError(error) }
    }

    /// A write in one transaction, durable (synchronous=FULL) when it returns; GRDB's errors
    /// become OutboxError here.
    func writing<T>(_ body: (Database) throws -> T) throws(OutboxError) -> T {
        do { return try database.write(body) } catch { throw OutboxError(error) }
    }

    /// A write that manages its own transactions (group commit, progress at NORMAL); GRDB's
    /// errors become OutboxError here.
    func writingWithoutTransaction<T>(_ body: (Database) throws -> T) throws(OutboxError) -> T {
        do { return try database.writeWithoutTransaction(body) } catch { throw OutboxError(error) }
    }

    /// Whether GRDB is still unopened (for tests).
    var isCold: Bool {
        connection.withLockedValue { if case .cold = $0 { true } else { false } }
    }

    /// Runs `body` on the cold connection, with the lock held, while the outbox is cold; false
    /// (and `body` not run) once GRDB is open.
    func whileCold(_ body: (ColdConnection) throws -> Void) throws(OutboxError) -> Bool {
        do {
            return try connection.withLockedValue { connection in
                guard case .cold(let cold) = connection else { return false }
                try body(cold)
                return true
            }
        } catch {
            throw OutboxError(error)
        }
    }

    /// A transaction that records progress the server already holds (an event id it returned), so
    /// it need not wait for the disk: synchronous=NORMAL, which survives a crash of the service but
    /// may lose the last commits to a power loss — and the next FULL commit makes them durable too.
    /// Only for records whose loss leads to repeating an idempotent request, never for a share,
    /// a transaction id or anything else that was acknowledged to someone.
    func writeProgress<T>(_ body: (Database) throws -> T) throws(OutboxError) -> T {
        try writingWithoutTransaction { db in
            try db.cachedStatement(sql: "PRAGMA synchronous = NORMAL").execute()
            let outcome = Result { () throws -> T in
                var value: T?
                try db.inTransaction {
                    value = try body(db)
                    return .commit
                }
                return value!
            }
            // Back to FULL before anything else writes, or a share could be acknowledged at
            // NORMAL. Should that fail, the call fails too, even after a commit: what it
            // recorded is progress an idempotent request repeats, never a share.
            try db.cachedStatement(sql: "PRAGMA synchronous = FULL").execute()
            return try outcome.get()
        }
    }

    /// Commits a new share and its items; returns once they are on disk.
    ///
    /// Group commit: shares that arrive while another commit is waiting for the disk are written
    /// together in the next transaction, by whichever caller gets the connection first, so several
    /// clients sharing at once wait for one sync each rather than queueing behind each other's.
    /// While the outbox is cold, one transaction per share on the cold connection, one at a time:
    /// the few shares of a start's first moment.
    public func insert(_ share: Share) throws(OutboxError) {
        if try whileCold({ try $0.insert(Self.rows(of: share)) }) { return }
        let entry = QueuedInsert(share)
        waiting.withLockedValue { $0.append(entry) }
        try writingWithoutTransaction { db in
            guard entry.result == nil else { return } // committed by the caller before
            let batch = waiting.withLockedValue { queue in
                defer { queue.removeAll() }
                return queue
            }
            do {
                try db.inTransaction {
                    for queued in batch {
                        for row in Self.rows(of: queued.share) {
                            try db.cachedStatement(sql: row.sql).execute(arguments: SQLValue.arguments(row.values))
                        }
                    }
                    return .commit
                }
                batch.forEach { $0.result = .success(()) }
            } catch {
                batch.forEach { $0.result = .failure(OutboxError(error)) }
            }
        }
        if case .failure(let error)? = entry.result { throw error }
    }

    /// The statements that insert a share and its items, for either connection.
    static func rows(of share: Share) -> [(sql: String, values: [SQLValue])] {
        [(ShareRow.insertSQL, ShareRow(share).insertValues)]
            + share.intent.items.enumerated().map { position, item in
                (ItemRow.insertSQL, ItemRow(shareID: share.id, position: position, item: item).insertValues)
            }
    }

    /// A share waiting for the next group commit; `result` is written inside the serialized
    /// database access that committed it, and read after it.
    // @unchecked Sendable: `result` is written only inside the database queue's serialized write
    // that committed the share, and read by its owner after that write returned.
    final class QueuedInsert: @unchecked Sendable {
        let share: Share
        var result: Result<Void, OutboxError>?
        init(_ share: Share) { self.share = share }
    }

    public func share(id: String) throws(OutboxError) -> Share? {
        try reading { db in
            guard let row = try ShareRow.fetch(id: id, in: db) else { return nil }
            return try row.share(
                items: ItemRow.items(of: id, in: db), deliveries: DeliveryRow.deliveries(of: id, in: db))
        }
    }

    /// A share's state alone (the sender asks before every event whether the share was cancelled).
    public func state(of id: String) throws(OutboxError) -> ShareState? {
        try reading { db in
            try String.fetchOne(db.cachedStatement(sql: "SELECT state FROM share WHERE id = ?"), arguments: [id])
                .flatMap(ShareState.init(rawValue:))
        }
    }

    /// Every share, newest first.
    public func shares() throws(OutboxError) -> [Share] {
        try reading { db in
            let rows = try ShareRow.order(Column("created_at").desc, Column("id").desc).fetchAll(db)
            var items: [String: [ShareItem]] = [:]
            for row in try ItemRow.order(Column("share_id"), Column("position")).fetchAll(db) {
                items[row.shareID, default: []].append(row.item)
            }
            var deliveries: [String: [Delivery]] = [:]
            for row in try DeliveryRow.order(Column("share_id"), Column("position")).fetchAll(db) {
                deliveries[row.shareID, default: []].append(row.delivery)
            }
            return rows.map { $0.share(items: items[$0.id] ?? [], deliveries: deliveries[$0.id] ?? []) }
        }
    }

    /// Sets a share's state, compare-and-set: only when its state is one of `from` (nil: any), so
    /// that two actors (the sender settling a share, a person cancelling it) can never both win.
    /// With `account`, also only when the share goes out as that user (as one of its accounts) or
    /// is nobody's yet, and then it becomes theirs.
    /// Returns the share as committed, or nil when there is no such share or it did not match.
    @discardableResult
    public func update(
        id: String, state: ShareState, failure: Share.Failure? = nil, at time: Int64,
        from expected: Set<ShareState>? = nil, account: String? = nil
    ) throws(OutboxError) -> Share? {
        try writing { db in
            guard var row = try ShareRow.fetch(id: id, in: db) else { return nil }
            if let expected, !expected.contains(where: { $0.rawValue == row.state }) { return nil }
            if let account {
                guard row.mayGoOut(as: account) else { return nil }
                row.account = row.account ?? account
            }
            row.state = state.rawValue
            row.updatedAt = time
            row.errorName = failure?.name
            row.errorMessage = failure?.message
            try row.update(db)
            return try row.share(
                items: ItemRow.items(of: id, in: db), deliveries: DeliveryRow.deliveries(of: id, in: db))
        }
    }

    /// The ids of every share (to sweep spool directories a crash left without a share).
    public func ids() throws(OutboxError) -> Set<String> {
        try reading { db in Set(try String.fetchAll(db, sql: "SELECT id FROM share")) }
    }

    /// The shares that may still need their staged files: every one not sent or cancelled (a
    /// failed share keeps its files for Retry).
    public func idsNeedingFiles() throws(OutboxError) -> Set<String> {
        try reading { db in
            Set(
                try String.fetchAll(
                    db, sql: "SELECT id FROM share WHERE state NOT IN (?, ?)",
                    arguments: [ShareState.sent.rawValue, ShareState.cancelled.rawValue]))
        }
    }

    /// How many shares are in one state, counting no further than `limit`: a count walks the state
    /// index entry by entry, and asked for every new share it made accepting 10,000 shares quadratic.
    public func count(in state: ShareState, upTo limit: Int = .max) throws(OutboxError) -> Int {
        try reading { db in
            try Int.fetchOne(
                db.cachedStatement(sql: "SELECT COUNT(*) FROM (SELECT 1 FROM share WHERE state = ? LIMIT ?)"),
                arguments: [state.rawValue, limit]) ?? 0
        }
    }

    /// Whether any share waits for Ferry itself (queued or sending): the service stays up for it.
    public func hasPendingWork() throws(OutboxError) -> Bool {
        try hasShares(in: ShareState.allCases.filter(\.isPendingWork))
    }

    /// Whether any share is in one of `states`: one index lookup, however many shares there are.
    public func hasShares(in states: [ShareState]) throws(OutboxError) -> Bool {
        try reading { db in
            try states.contains { state in
                try Bool.fetchOne(
                    db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM share WHERE state = ?)"),
                    arguments: [state.rawValue]) ?? false
            }
        }
    }

    /// How many shares are in each state.
    public func countsByState() throws(OutboxError) -> [ShareState: Int] {
        try reading { db in
            var counts: [ShareState: Int] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT state, COUNT(*) AS n FROM share GROUP BY state") {
                if let state = ShareState(rawValue: row["state"]) { counts[state] = row["n"] }
            }
            return counts
        }
    }
}
