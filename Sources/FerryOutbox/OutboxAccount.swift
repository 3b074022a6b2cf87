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
    /// How both of the outbox's connections read the account: these columns, in this order.
    static let selectSQL = """
        SELECT user_id, homeserver, device_id, signed_in, secret_storage, sign_in FROM account WHERE id = 1
        """

    /// The account from a row of `selectSQL`; nil without a user or homeserver.
    init?(columns: [SQLValue]) {
        guard columns.count == 6, let user = columns[0].text, let homeserver = columns[1].text else { return nil }
        self.init(
            userID: user, homeserver: homeserver, deviceID: columns[2].text ?? "",
            signedIn: (columns[3].integer ?? 0) != 0, secretStorage: columns[4].text, signIn: columns[5].integer ?? 0)
    }
}

extension Outbox {
    /// Who was signed in; read without GRDB while the outbox is cold (the service's start).
    public func account() throws(OutboxError) -> StoredAccount? {
        var columns: [SQLValue]?
        if try !whileCold({ columns = try $0.firstRow(StoredAccount.selectSQL) }) {
            columns = try reading { db in
                try Row.fetchOne(db, sql: StoredAccount.selectSQL).map { row in row.databaseValues.map(SQLValue.init) }
            }
        }
        return columns.flatMap(StoredAccount.init(columns:))
    }

    /// Saves who is signed in.
    public func save(account: StoredAccount) throws(OutboxError) {
        try writing { db in try Self.write(account, in: db) }
    }

    /// Saves a new sign-in, numbered one after the last (Delivery.signIn); returns it as saved.
    public func save(newSignIn account: StoredAccount) throws(OutboxError) -> StoredAccount {
        try writing { db in
            var numbered = account
            numbered.signIn = (try Int64.fetchOne(db, sql: "SELECT sign_in FROM account WHERE id = 1") ?? 0) + 1
            try Self.write(numbered, in: db)
            return numbered
        }
    }

    private static func write(_ account: StoredAccount, in db: Database) throws {
        try db.execute(
            sql: """
                INSERT INTO account (id, user_id, homeserver, device_id, signed_in, secret_storage, sign_in)
                VALUES (1, ?, ?, ?, ?, ?, ?)
                ON CONFLICT(id) DO UPDATE SET user_id = excluded.user_id, homeserver = excluded.homeserver,
                    device_id = excluded.device_id, signed_in = excluded.signed_in,
                    secret_storage = excluded.secret_storage, sign_in = excluded.sign_in
                """,
            arguments: [
                account.userID, account.homeserver, account.deviceID, account.signedIn,
                account.secretStorage, account.signIn,
            ])
    }
}
