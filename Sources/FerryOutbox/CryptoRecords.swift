import Foundation
import GRDB

/// The sealed records of end-to-end encryption (OutboxSchema v6), by name. The outbox never sees
/// inside them; it only makes each change durable, and several changes one transaction, so that
/// a ratchet's new state and what it encrypted are kept together or not at all.
extension Outbox: CryptoRecordStore {
    /// The sealed bytes kept under `name`, if any.
    public func cryptoRecord(_ name: String) throws(OutboxError) -> [UInt8]? {
        try reading { db in
            try Data.fetchOne(db, sql: "SELECT sealed FROM crypto_record WHERE name = ?", arguments: [name]).map {
                [UInt8]($0)
            }
        }
    }

    /// Whether a record named `name` is kept (without reading it).
    public func hasCryptoRecord(_ name: String) throws(OutboxError) -> Bool {
        try reading { db in
            try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM crypto_record WHERE name = ?)", arguments: [name])
        } ?? false
    }

    /// The records whose names start with `prefix`, with when each was last written (µs).
    public func cryptoRecords(prefix: String) throws(OutboxError) -> [(name: String, sealed: [UInt8], updated: Int64)] {
        try reading { db in
            try Row.fetchAll(
                db, sql: "SELECT name, sealed, updated FROM crypto_record WHERE substr(name, 1, ?) = ?",
                arguments: [prefix.utf8.count, prefix]
            ).map { row in
                (row["name"], [UInt8](row["sealed"] as Data), row["updated"])
            }
        }
    }

    /// Applies every change in one transaction, durably (synchronous=FULL): a ratchet step is on
    /// disk before anything it produced leaves the machine.
    public func writeCryptoRecords(_ changes: [CryptoRecordChange], at time: Int64) throws(OutboxError) {
        try writing { db in
            for change in changes {
                if let sealed = change.sealed {
                    try db.execute(
                        sql: "INSERT OR REPLACE INTO crypto_record (name, sealed, updated) VALUES (?, ?, ?)",
                        arguments: [change.name, Data(sealed), time])
                } else {
                    try db.execute(sql: "DELETE FROM crypto_record WHERE name = ?", arguments: [change.name])
                }
            }
        }
    }

    /// Deletes every encryption record (at sign-out: the device's keys and sessions go with it).
    public func deleteCryptoRecords() throws(OutboxError) {
        try writing { db in try db.execute(sql: "DELETE FROM crypto_record") }
    }

    /// Whether any encryption record is kept.
    public func hasCryptoRecords() throws(OutboxError) -> Bool {
        try reading { db in try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM crypto_record)") ?? false }
    }
}
