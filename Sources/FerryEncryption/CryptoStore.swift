import FerryCore
import FerryCrypto
import FerryOutbox

/// What one account's end-to-end encryption keeps, sealed under a key from the Secret Service,
/// in a `CryptoRecordStore` (the account's rows of the outbox's `account_crypto_record` table;
/// memory in unit tests). Names say what a record is:
///
/// - `account`: the device (`DeviceRecord`);
/// - `olm:<curve25519>`: the Olm session with another device, by its identity key;
/// - `room:<room id>`: the room's outbound Megolm session and who has its key (`RoomRecord`);
/// - `event:<transaction id>`: an encrypted event made but not known to be sent yet, so that a
///   retry after a crash sends the same ciphertext again, never a second message index;
/// - `file:<mxc uri>`: an encrypted attachment's `file` object (its key), until its event is made;
/// - `master:<user id>`: the user's master key as first seen (FERRY_ONLY_VERIFIED_DEVICES).
struct CryptoStore: Sendable {
    let records: any CryptoRecordStore
    let seal: StateSeal
    let clock: @Sendable () -> Int64

    /// A change to make durable together with others (`write`).
    struct Change {
        fileprivate let name: String
        fileprivate let value: (any Encodable & Sendable)?
    }

    static func set<Value: Encodable & Sendable>(_ name: String, _ value: Value) -> Change {
        Change(name: name, value: value)
    }
    static func delete(_ name: String) -> Change { Change(name: name, value: nil) }

    /// The record `name`, or nil when there is none. A record that does not open (another key, an
    /// edited database) throws: it is never silently replaced by a fresh state.
    func load<Value: Decodable>(_ name: String, as type: Value.Type = Value.self) throws(EncryptionFailure) -> Value? {
        let bytes: [UInt8]?
        do { bytes = try records.cryptoRecord(name) } catch { throw .storage("\(error)") }
        guard let bytes else { return nil }
        do { return try seal.open(bytes, as: name, type: Value.self) } catch { throw .sealedStateUnreadable(name) }
    }

    /// Seals and writes every change in one durable transaction.
    func write(_ changes: [Change]) throws(EncryptionFailure) {
        var sealed: [CryptoRecordChange] = []
        for change in changes {
            if let value = change.value {
                do {
                    sealed.append(.init(name: change.name, sealed: try seal.seal(AnyEncodable(value), as: change.name)))
                } catch {
                    // TRANSLATORS: completes "its encryption state could not be kept ({why})".
                    throw .storage(tr("a state that cannot be sealed"))
                }
            } else {
                sealed.append(.init(name: change.name, sealed: nil))
            }
        }
        do { try records.writeCryptoRecords(sealed, at: clock()) } catch { throw .storage("\(error)") }
    }

    /// Encrypted events and attachment keys kept more than `age` microseconds: their shares have
    /// long been sent or given up.
    func dropEvents(olderThan age: Int64) throws(EncryptionFailure) {
        var old: [String] = []
        for prefix in ["event:", "file:"] {
            do {
                old += try records.cryptoRecords(prefix: prefix).filter { clock() - $0.updated > age }.map(\.name)
            } catch {
                throw .storage("\(error)")
            }
        }
        guard !old.isEmpty else { return }
        do { try records.writeCryptoRecords(old.map { .init(name: $0, sealed: nil) }, at: clock()) } catch {
            throw .storage("\(error)")
        }
    }
}

/// Lets `write` take a list of differently typed values.
private struct AnyEncodable: Encodable {
    let value: any Encodable
    init(_ value: any Encodable) { self.value = value }
    func encode(to encoder: Encoder) throws { try value.encode(to: encoder) }
}

/// Ferry's device as kept: whose it is, its keys, and whether the server has its device keys.
struct DeviceRecord: Codable, Sendable {
    var userID: String
    var deviceID: String
    var account: OlmAccount.State
    var deviceKeysPublished: Bool
}

/// A room's outbound Megolm session as kept, with what rotation and key sharing need.
struct RoomRecord: Codable, Sendable {
    var session: OutboundGroupSession.State
    /// When the session was made (µs).
    var created: Int64
    /// Messages encrypted with it.
    var messages: Int
    /// Who has its key: user → device id → the device's Curve25519 key.
    var sharedWith: [String: [String: String]]
    /// Devices told `m.room_key.withheld` for it (user → device ids), so they are told once.
    var withheldFrom: [String: [String]] = [:]
    /// The `shared_history` its key was shared with: a change of the room's history visibility
    /// needs a new session.
    var sharedHistory: Bool? = nil
    /// The session's key from its first index (the unsigned export), for the key backup: the
    /// backup then reads every message of the session, whenever it is written.
    var exportedKey: String? = nil
    /// The version of the key backup that holds the session's key.
    var backedUpTo: String? = nil
    /// Identity keys of devices that had the key and started a new Olm session since (they may
    /// have lost it with the old one): given it again with the next event. Kept apart from
    /// `sharedWith`, which rotation reads ("a member left"). Optional: records from before it
    /// decode without it.
    var resend: [String]? = nil

    /// The session's key from its first index, for a backup or a forwarded key; a record from
    /// before it was kept gives the key from where `outbound` is now.
    func firstKey(of outbound: OutboundGroupSession) -> String { exportedKey ?? outbound.exportedKey }
}
