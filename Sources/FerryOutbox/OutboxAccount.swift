import GRDB

/// The signed-in account as the outbox keeps it: who and where, never the secret.
public struct StoredAccount: Equatable, Sendable {
    public var userID: String
    public var homeserver: String
    public var deviceID: String
    public var signedIn: Bool
    public var secretStorage: String?
    /// Which sign-in this is: `save(newSignIn:)` numbers each new one after the last.
    public var signIn: Int64

    public init(
        userID: String, homeserver: String, deviceID: String, signedIn: Bool, secretStorage: String?,
        signIn: Int64 = 0
    ) {
        self.userID = userID
        self.homeserver = homeserver
        self.deviceID = deviceID
        self.signedIn = signedIn
        self.secretStorage = secretStorage
        self.signIn = signIn
    }
}

extension StoredAccount {
    /// The columns both of the outbox's connections read an account from, in this order.
    static let columns = "user_id, homeserver, device_id, signed_in, secret_storage, sign_in"

    /// The account signed in last (its sign-in numbered highest), signed out or not.
    static let selectSQL = "SELECT \(columns) FROM signed_account ORDER BY sign_in DESC, user_id LIMIT 1"

    /// The account from a row of `columns`; nil without a user or homeserver.
    init?(columns: [SQLValue]) {
        guard columns.count == 6, let user = columns[0].text, let homeserver = columns[1].text else { return nil }
        self.init(
            userID: user, homeserver: homeserver, deviceID: columns[2].text ?? "",
            signedIn: (columns[3].integer ?? 0) != 0, secretStorage: columns[4].text, signIn: columns[5].integer ?? 0)
    }

    init?(row: Row) { self.init(columns: row.databaseValues.map(SQLValue.init)) }
}

/// The accounts, one row each under its user id (OutboxSchema v7), never their secrets.
extension Outbox {
    /// The account signed in last, signed out or not; read without GRDB while the outbox is cold.
    /// (The service reads `signedInAccounts()` at its start.)
    public func account() throws(OutboxError) -> StoredAccount? {
        var columns: [SQLValue]?
        if try !whileCold({ columns = try $0.firstRow(StoredAccount.selectSQL) }) {
            columns = try reading { db in
                try Row.fetchOne(db, sql: StoredAccount.selectSQL).map { row in row.databaseValues.map(SQLValue.init) }
            }
        }
        return columns.flatMap(StoredAccount.init(columns:))
    }

    /// The accounts signed in, the last signed in first; read without GRDB while the outbox is
    /// cold (the service's start reads them before its first reply).
    public func signedInAccounts() throws(OutboxError) -> [StoredAccount] {
        let sql = "SELECT \(StoredAccount.columns) FROM signed_account WHERE signed_in ORDER BY sign_in DESC, user_id"
        var rows: [[SQLValue]] = []
        if try !whileCold({ rows = try $0.rows(sql) }) {
            rows = try reading { db in
                try Row.fetchAll(db, sql: sql).map { row in row.databaseValues.map(SQLValue.init) }
            }
        }
        return rows.compactMap(StoredAccount.init(columns:))
    }

    /// Every account Ferry knows, signed in or not, by user id.
    public func accounts() throws(OutboxError) -> [StoredAccount] {
        try reading { db in
            try Row.fetchAll(db, sql: "SELECT \(StoredAccount.columns) FROM signed_account ORDER BY user_id")
                .compactMap(StoredAccount.init(row:))
        }
    }

    /// The account of `userID`, if Ferry knows it.
    public func account(userID: String) throws(OutboxError) -> StoredAccount? {
        try reading { db in
            try Row.fetchOne(
                db, sql: "SELECT \(StoredAccount.columns) FROM signed_account WHERE user_id = ?", arguments: [userID]
            ).flatMap(StoredAccount.init(row:))
        }
    }

    /// Saves an account as it is now (signed out, its device, where its secret is).
    public func save(account: StoredAccount) throws(OutboxError) {
        try writing { db in try Self.write(account, in: db) }
    }

    /// Saves a new sign-in, numbered one after the last of any account (Delivery.signIn): a
    /// number is never given twice, so a delivery begun under an earlier sign-in is always told
    /// from one begun under this. Returns the account as saved.
    public func save(newSignIn account: StoredAccount) throws(OutboxError) -> StoredAccount {
        try writing { db in
            var numbered = account
            numbered.signIn = (try Int64.fetchOne(db, sql: "SELECT max(sign_in) FROM signed_account") ?? 0) + 1
            try Self.write(numbered, in: db)
            return numbered
        }
    }

    private static func write(_ account: StoredAccount, in db: Database) throws {
        try db.execute(
            sql: """
                INSERT INTO signed_account (\(StoredAccount.columns)) VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT(user_id) DO UPDATE SET homeserver = excluded.homeserver,
                    device_id = excluded.device_id, signed_in = excluded.signed_in,
                    secret_storage = excluded.secret_storage, sign_in = excluded.sign_in
                """,
            arguments: [
                account.userID, account.homeserver, account.deviceID, account.signedIn,
                account.secretStorage, account.signIn,
            ])
    }
}
