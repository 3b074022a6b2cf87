import Synchronization

/// Where one account's end-to-end encryption keeps its sealed records, by name: that account's
/// rows of the outbox's `account_crypto_record` table in the service (`AccountCryptoRecords`),
/// memory in unit tests (`InMemoryCryptoRecords`). Whatever holds them makes the changes of one
/// write durable together or not at all: a ratchet's new state and what it encrypted are never
/// kept apart.
public protocol CryptoRecordStore: Sendable {
    /// The sealed bytes kept under `name`, if any.
    func cryptoRecord(_ name: String) throws(OutboxError) -> [UInt8]?
    /// Whether a record is kept under `name`, without reading it.
    func hasCryptoRecord(_ name: String) throws(OutboxError) -> Bool
    /// The records whose names begin with `prefix`, with when each was last written.
    func cryptoRecords(prefix: String) throws(OutboxError) -> [(name: String, sealed: [UInt8], updated: Int64)]
    /// Applies every change at once, at `time` (µs).
    func writeCryptoRecords(_ changes: [CryptoRecordChange], at time: Int64) throws(OutboxError)
    /// Deletes every record of the account (at sign-out: the device's keys and sessions go with it).
    func deleteCryptoRecords() throws(OutboxError)
    /// Whether any record is kept.
    func hasCryptoRecords() throws(OutboxError) -> Bool
}

/// One change: `sealed` bytes for `name`, or nil to delete the record.
public struct CryptoRecordChange: Sendable {
    public var name: String
    public var sealed: [UInt8]?
    public init(name: String, sealed: [UInt8]?) {
        self.name = name
        self.sealed = sealed
    }
}

/// The records in memory, for tests of the encryption's logic without a database file. A write
/// is one step under the lock, as one transaction is in the outbox.
public final class InMemoryCryptoRecords: CryptoRecordStore {
    private let records = Mutex<[String: (sealed: [UInt8], updated: Int64)]>([:])

    public init() {}

    public func cryptoRecord(_ name: String) -> [UInt8]? {
        records.withLock { $0[name]?.sealed }
    }

    public func hasCryptoRecord(_ name: String) -> Bool {
        records.withLock { $0[name] != nil }
    }

    public func cryptoRecords(prefix: String) -> [(name: String, sealed: [UInt8], updated: Int64)] {
        records.withLock { records in
            records.filter { $0.key.hasPrefix(prefix) }.sorted { $0.key < $1.key }
                .map { (name: $0.key, sealed: $0.value.sealed, updated: $0.value.updated) }
        }
    }

    public func writeCryptoRecords(_ changes: [CryptoRecordChange], at time: Int64) {
        records.withLock { records in
            for change in changes { records[change.name] = change.sealed.map { (sealed: $0, updated: time) } }
        }
    }

    public func deleteCryptoRecords() {
        records.withLock { $0 = [:] }
    }

    public func hasCryptoRecords() -> Bool {
        records.withLock { !$0.isEmpty }
    }
}
