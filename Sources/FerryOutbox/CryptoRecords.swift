import Foundation
import GRDB

/// One account's sealed records of end-to-end encryption (OutboxSchema v8), by name. The outbox
/// never sees inside them; it only makes each change durable, and several changes one
/// transaction, so that a ratchet's new state and what it encrypted are kept together or not at
/// all. Another account's records are out of reach: every statement is bound to `owner`.
public struct AccountCryptoRecords: CryptoRecordStore {
    let outbox: Outbox
    /// The user id whose records these are.
    public let owner: String

    /// The sealed bytes kept under `name`, if any.
    public func cryptoRecord(_ name: String) throws(OutboxError) -> [UInt8]? {
        try outbox.reading { db in
            try Data.fetchOne(
                db, sql: "SELECT sealed FROM account_crypto_record WHERE owner = ? AND name = ?",
                arguments: [owner, name]
            ).map { [UInt8]($0) }
        }
    }

    /// Whether a record named `name` is kept (without reading it).
    public func hasCryptoRecord(_ name: String) throws(OutboxError) -> Bool {
        try outbox.reading { db in
            try Bool.fetchOne(
                db, sql: "SELECT EXISTS (SELECT 1 FROM account_crypto_record WHERE owner = ? AND name = ?)",
                arguments: [owner, name])
        } ?? false
    }

    /// The records whose names start with `prefix`, with when each was last written (µs).
    public func cryptoRecords(prefix: String) throws(OutboxError) -> [(name: String, sealed: [UInt8], updated: Int64)] {
        try outbox.reading { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT name, sealed, updated FROM account_crypto_record
                    WHERE owner = ? AND substr(name, 1, ?) = ? ORDER BY name
                    """,
                arguments: [owner, prefix.utf8.count, prefix]
            ).map { row in
                (row["name"], [UInt8](row["sealed"] as Data), row["updated"])
            }
        }
    }

    /// Applies every change in one transaction, durably (synchronous=FULL): a ratchet step is on
    /// disk before anything it produced leaves the machine.
    public func writeCryptoRecords(_ changes: [CryptoRecordChange], at time: Int64) throws(OutboxError) {
        try outbox.writing { db in
            for change in changes {
                if let sealed = change.sealed {
                    try db.execute(
                        sql: """
                            INSERT OR REPLACE INTO account_crypto_record (owner, name, sealed, updated)
                            VALUES (?, ?, ?, ?)
                            """,
                        arguments: [owner, change.name, Data(sealed), time])
                } else {
                    try db.execute(
                        sql: "DELETE FROM account_crypto_record WHERE owner = ? AND name = ?",
                        arguments: [owner, change.name])
                }
            }
        }
    }

    /// Deletes this account's encryption records (at sign-out: the device's keys and sessions go
    /// with it); other accounts' stay.
    public func deleteCryptoRecords() throws(OutboxError) {
        try outbox.writing { db in
            try db.execute(sql: "DELETE FROM account_crypto_record WHERE owner = ?", arguments: [owner])
        }
    }

    /// Whether this account keeps any encryption record.
    public func hasCryptoRecords() throws(OutboxError) -> Bool {
        try outbox.reading { db in
            try Bool.fetchOne(
                db, sql: "SELECT EXISTS (SELECT 1 FROM account_crypto_record WHERE owner = ?)", arguments: [owner])
        } ?? false
    }
}

extension Outbox {
    /// The encryption records of `userID`'s account, and only its.
    public func cryptoRecords(of userID: String) -> AccountCryptoRecords {
        AccountCryptoRecords(outbox: self, owner: userID)
    }
}
