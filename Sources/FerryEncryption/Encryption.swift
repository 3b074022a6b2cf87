import FerryAccount
import FerryCore
import FerryCrypto
import FerryMatrix
import FerryOutbox
import Foundation
import Logging

/// End-to-end encryption for the signed-in person's device: its identity on the server, and the
/// events it encrypts. One actor for the whole process, so a ratchet is never stepped by two
/// tasks at once; every step is kept durably before what it produced leaves the machine.
///
/// Nothing is done until it is needed: a cold start that takes a share never reads the key, and a
/// person who never shares into an encrypted room only pays for the device at sign-in.
public actor Encryption {
    /// Where the sealed records are kept (the outbox in the service).
    let records: any CryptoRecordStore
    let vault: TokenVault
    let logger: Logger
    let clock: @Sendable () -> Int64
    /// The store opened for this user (their seal key read).
    private var opened: (userID: String, store: CryptoStore)?
    /// Rooms' records as last written, by record name (RoomEncryption).
    var roomRecords: [String: RoomRecord] = [:]
    /// Whose turn it is (OneAtATime).
    var turns = OneAtATime()
    /// The device as last kept, and when its one-time keys were last counted.
    private var device: (record: DeviceRecord, checked: Int64)?
    /// When the fallback key was last replaced (a server that reports it used at every sync gets
    /// one new key a minute, not one per event).
    private var fallbackReplaced: Int64?

    /// A verification or set-up of this device is running (one at a time: they write the same
    /// account data and keys).
    var verifying = false
    /// A cross-signing set-up that began and did not finish, by user: a retry goes on with the
    /// same identity and recovery key instead of finding its own half-made identity in the way.
    var pendingSetUps: [String: PendingSetUp] = [:]

    /// Verification messages syncs took while an emoji verification listens (nil: nobody
    /// listens, and they are dropped with the rest of what a sync says); VerificationInbox.
    var verificationListening: VerificationListening?
    var nextListener = 0

    /// The account's key backup as last asked (RoomKeyBackup); forgotten when the master key
    /// Ferry trusts changes.
    var knownBackup: KnownBackup?

    /// Olm messages and room-key requests syncs took, to handle before the next event
    /// (ToDeviceInbox).
    var inbox: [ToDeviceEvent] = []

    /// What is known of encrypted rooms' readers, for one sign-in, from which sync token
    /// (ReaderTracking).
    var tracking: Tracking?

    /// One-time keys the server should hold for others to start sessions with; topped up to
    /// `oneTimeKeyTarget` when fewer than half are left.
    static let oneTimeKeyTarget = 50
    /// How often the count is looked at again (µs): ten minutes.
    static let topUpInterval: Int64 = 600_000_000
    /// Encrypted events older than this are dropped from the store (µs): a week.
    static let eventRecordAge: Int64 = 604_800_000_000

    /// Room keys go only to devices their owners verified (cross-signed); the rest are told
    /// `m.room_key.withheld` with `m.unverified`. Off by default, as in Element.
    let onlyVerifiedDevices: Bool
    /// Answers the requests in place of the homeserver, in unit tests; nil: the network.
    let responder: MatrixHTTP.Responder?

    /// `responder`: a homeserver in process, for unit tests (see `MatrixHTTP.Responder`).
    public init(
        records: any CryptoRecordStore, vault: TokenVault, onlyVerifiedDevices: Bool = false, logger: Logger,
        clock: @escaping @Sendable () -> Int64, responder: MatrixHTTP.Responder? = nil
    ) {
        self.responder = responder
        self.onlyVerifiedDevices = onlyVerifiedDevices
        self.records = records
        self.vault = vault
        self.logger = logger
        self.clock = clock
    }

    /// The client-server API as `session`.
    nonisolated func http(_ session: Session) -> MatrixHTTP {
        MatrixHTTP(session: session, responder: responder)
    }

    /// Whether the store holds a device for this sign-in: the device id may be signed in with
    /// again only then (a device's keys never change under the same id).
    public nonisolated func keepsDevice() -> Bool {
        logger.attempt("reading whether encryption records are kept") { try records.hasCryptoRecords() } ?? false
    }

    /// The device's identity exists and its keys (device keys, one-time keys, a fallback key) are
    /// on the server. At sign-in, and before encrypting.
    @discardableResult
    public func prepareDevice(for session: Session) async throws(EncryptionFailure) -> DeviceKeys {
        try await exclusively { () async throws(EncryptionFailure) in
            let (_, record) = try await ready(session)
            let account = try Self.account(record)
            return DeviceKeys(ed25519: account.ed25519, curve25519: account.curve25519)
        }
    }

    /// The public keys of Ferry's device.
    public struct DeviceKeys: Sendable {
        public var ed25519: String
        public var curve25519: String
    }

    /// Sign-out: the device's keys, sessions and the key that sealed them are deleted (after an
    /// event being made, never under it).
    public func forget(userID: String) async {
        await exclusively { forgetNow(userID: userID) }
    }

    private func forgetNow(userID: String) {
        pendingSetUps[userID] = nil
        // Records left behind cannot be opened without the key removed next: the next sign-in
        // finds them unreadable and starts a new device (Account.deviceToKeep).
        _ = logger.attempt("deleting the encryption records at sign-out") { try records.deleteCryptoRecords() }
        vault.remove(userID: userID)
        opened = nil
        device = nil
        tracking = nil
        knownBackup = nil
        inbox = []
        roomRecords = [:]
    }

    /// The tags encrypted events carry for these transaction ids (tag → id), under this user's key.
    func tags(for transactionIDs: Set<String>, session: Session) async throws(EncryptionFailure) -> [String: String] {
        try await exclusively { () throws(EncryptionFailure) in
            let seal = try store(for: session).seal
            return Dictionary(transactionIDs.map { (seal.tag($0), $0) }, uniquingKeysWith: { first, _ in first })
        }
    }

    /// Whether the key of an encrypted upload is kept (it can go into an encrypted room's event).
    /// Unread, it is not: the file is uploaded again rather than sent without its key.
    public nonisolated func keepsFile(for uri: String) -> Bool {
        logger.attempt("reading whether a file's key is kept") { try records.hasCryptoRecord("file:\(uri)") } ?? false
    }

    /// Whether Ferry has a session for the room: it encrypted there before.
    /// Unread, the question is not answered with a guess: the error fails the destination (as
    /// EncryptedRoom, with nothing sent), never a plain channel.
    public nonisolated func hasEncrypted(for roomID: String) throws(EncryptionFailure) -> Bool {
        do { return try records.hasCryptoRecord("room:\(roomID)") } catch { throw .storage("\(error)") }
    }

    // MARK: - The store and the device

    func store(for session: Session) throws(EncryptionFailure) -> CryptoStore {
        if let opened, opened.userID == session.userID { return opened.store }
        device = nil
        roomRecords = [:]
        var kept: String?
        do {
            kept = try vault.kept(userID: session.userID)
        } catch {
            // Locked, or not running yet: when there is a kept state, its key is asked again
            // with the next event and nothing is deleted; with none, a new key is made (and kept
            // where TokenVault can: the Secret Service, or the private file).
            if keepsDevice() { throw .sealKeyUnavailable(error.message) }
            kept = nil
        }
        let seal: StateSeal
        if let kept, let bytes = Data(base64Encoded: kept), let existing = StateSeal(keyBytes: Array(bytes)) {
            seal = existing
        } else {
            if keepsDevice() {
                // Sealed records without their key can never be opened again. This device's
                // keys cannot be made anew under the same id (others would take it for an
                // impostor, and the server refuses one-time key ids it has seen): the records
                // go, so that the next sign-in is a new device, and until then nothing is encrypted.
                logger.warning("the key of the kept encryption state is gone; sign out and in again to encrypt")
                _ = logger.attempt("deleting the unreadable encryption records") { try records.deleteCryptoRecords() }
                throw .deviceKeysLost
            }
            seal = StateSeal()
            guard
                vault.store(
                    Data(seal.keyBytes).base64EncodedString(), userID: session.userID,
                    homeserver: session.homeserver) != nil
            else { throw .noSealKey }
        }
        let store = CryptoStore(records: records, seal: seal, clock: clock)
        opened = (session.userID, store)
        return store
    }

    /// The store and the device for `session`, its keys uploaded and topped up.
    func ready(_ session: Session) async throws(EncryptionFailure) -> (CryptoStore, DeviceRecord) {
        let store = try store(for: session)
        if let device, device.record.userID == session.userID, device.record.deviceID == session.deviceID,
            clock() - device.checked < Self.topUpInterval
        {
            return (store, device.record)
        }
        var record = try store.load("account", as: DeviceRecord.self)
        if let kept = record, kept.userID != session.userID || kept.deviceID != session.deviceID {
            // Another person's or another device's state: never used for this one.
            logger.notice("encryption state of another device found; starting afresh for this one")
            // Never go on beside them: that device's Olm sessions would be taken for this one's.
            do { try records.deleteCryptoRecords() } catch { throw .storage("\(error)") }
            roomRecords = [:]
            record = nil
        }
        if record == nil {
            var account = OlmAccount()
            account.generateFallbackKey()
            account.generateOneTimeKeys(Self.oneTimeKeyTarget)
            record = DeviceRecord(
                userID: session.userID, deviceID: session.deviceID, account: account.state,
                deviceKeysPublished: false)
            try store.write([CryptoStore.set("account", record!)])
            logger.info("made this device's encryption identity", metadata: ["device": "\(session.deviceID)"])
        }
        var kept = record!
        let api = DeviceKeysAPI(http: http(session))
        if !kept.deviceKeysPublished, try await serverListsOtherKeys(for: kept, api: api) {
            // Keys of an earlier identity under this device id (its records lost with their seal
            // key): others would take new keys under the same id for an impostor's. Nothing goes
            // up; a sign-in again is a new device.
            logger.error("the server lists other keys for this device; not encrypting from it")
            // TRANSLATORS: completes "{room} is end-to-end encrypted and Ferry could not encrypt for it: {reason}.
            // Nothing was sent there unencrypted."
            throw .crypto(tr("this device's encryption keys were lost; sign out and sign in again"))
        }
        if kept.deviceKeysPublished, try await !serverHasKeys(of: kept, api: api) {
            // The device was deleted at the server (signed out elsewhere) and made again by a
            // sign-in under its id: its keys go up again, the same keys.
            kept.deviceKeysPublished = false
        }
        var counts = try await upload(&kept, session: session, api: api, store: store)
        // A server's count is brought into 0...target: a negative or huge one must neither trap
        // nor make keys without end.
        let onServer = min(max(counts["signed_curve25519"] ?? 0, 0), Self.oneTimeKeyTarget)
        if onServer < Self.oneTimeKeyTarget / 2 {
            var account = try Self.account(kept)
            account.generateOneTimeKeys(Self.oneTimeKeyTarget - onServer)
            // Keys claimed by devices that never sent a message with them are never used up: only
            // the newest are kept, enough for what the server holds and some in flight. A late
            // message on a forgotten one does not decrypt, and its device gets a new session.
            account.forgetOldestOneTimeKeys(keeping: Self.oneTimeKeyTarget * 2)
            kept.account = account.state
            try store.write([CryptoStore.set("account", kept)])
            counts = try await upload(&kept, session: session, api: api, store: store)
            logger.info("topped up one-time keys", metadata: ["on server": "\(counts["signed_curve25519"] ?? 0)"])
        }
        // Kept longer, old records only take room: tried again at the next top-up.
        do { try store.dropEvents(olderThan: Self.eventRecordAge) } catch {
            logger.error("dropping old encrypted events failed", metadata: ["error": "\(error)"])
        }
        device = (kept, clock())
        return (store, kept)
    }

    /// The device as it is now kept (a session started from one of its one-time keys took it).
    func keptDevice(_ record: DeviceRecord) {
        device = (record, device?.checked ?? clock())
    }

    /// A sync said the server holds no unused fallback key for this device: someone claimed it
    /// (every one-time key was gone), and others would start sessions with that one key for good.
    /// A new one goes up; the old one is kept until then, for a message begun with it.
    func replaceUsedFallbackKey(_ session: Session) async throws(EncryptionFailure) {
        if let last = fallbackReplaced, clock() - last < 60_000_000 { return }
        var (store, kept) = try await ready(session)
        var account = try Self.account(kept)
        account.generateFallbackKey()
        kept.account = account.state
        try store.write([CryptoStore.set("account", kept)])
        _ = try await upload(&kept, session: session, api: DeviceKeysAPI(http: http(session)), store: store)
        device = (kept, device?.checked ?? clock())
        fallbackReplaced = clock()
        logger.info("replaced the fallback key the server reported used", metadata: ["device": "\(session.deviceID)"])
    }

    /// Whether the server lists keys for this device id that are not these.
    private func serverListsOtherKeys(
        for record: DeviceRecord, api: DeviceKeysAPI
    ) async throws(EncryptionFailure)
        -> Bool
    {
        let listed: JSONValue
        do { listed = try await api.query(users: [record.userID]) } catch { throw .server(error) }
        guard let keys = listed[record.userID]?[record.deviceID]?["keys"] else { return false }
        let account = try Self.account(record)
        return keys["ed25519:\(record.deviceID)"]?.stringValue != account.ed25519
            || keys["curve25519:\(record.deviceID)"]?.stringValue != account.curve25519
    }

    /// Whether the server lists this device with these very keys.
    private func serverHasKeys(of record: DeviceRecord, api: DeviceKeysAPI) async throws(EncryptionFailure) -> Bool {
        let listed: JSONValue
        do { listed = try await api.query(users: [record.userID]) } catch { throw .server(error) }
        let account = try Self.account(record)
        let keys = listed[record.userID]?[record.deviceID]?["keys"]
        return keys?["ed25519:\(record.deviceID)"]?.stringValue == account.ed25519
            && keys?["curve25519:\(record.deviceID)"]?.stringValue == account.curve25519
    }

    /// Uploads what the server lacks (the device keys once, new one-time and fallback keys), then
    /// notes it published; an empty upload just counts the keys the server holds.
    private func upload(
        _ record: inout DeviceRecord, session: Session, api: DeviceKeysAPI,
        store: CryptoStore
    ) async throws(EncryptionFailure) -> [String: Int] {
        var account = try Self.account(record)
        let keys = account.unpublishedKeys(userID: session.userID, deviceID: session.deviceID)
        let deviceKeys =
            record.deviceKeysPublished ? nil : account.deviceKeys(userID: session.userID, deviceID: session.deviceID)
        let counts: [String: Int]
        do {
            counts = try await api.upload(
                deviceKeys: deviceKeys, oneTimeKeys: keys.oneTimeKeys, fallbackKeys: keys.fallbackKeys)
        } catch {
            throw .server(error)
        }
        guard deviceKeys != nil || !keys.oneTimeKeys.isEmpty || !keys.fallbackKeys.isEmpty else { return counts }
        account.markKeysAsPublished()
        record.account = account.state
        record.deviceKeysPublished = true
        try store.write([CryptoStore.set("account", record)])
        return counts
    }

    static func account(_ record: DeviceRecord) throws(EncryptionFailure) -> OlmAccount {
        do { return try OlmAccount(state: record.account) } catch {
            // TRANSLATORS: completes "{room} is end-to-end encrypted and Ferry could not encrypt for it: {reason}.
            // Nothing was sent there unencrypted."
            throw .crypto(tr("the kept device identity does not decode"))
        }
    }
}

/// The keys of encrypted attachments, kept sealed under their `mxc:` URI from the upload until
/// the event that carries them is made (`file:<uri>`).
extension Encryption {
    func keep(file: JSONValue, for uri: String, session: Session) async throws(EncryptionFailure) {
        try await exclusively { () throws(EncryptionFailure) in
            try store(for: session).write([CryptoStore.set("file:\(uri)", file)])
        }
    }

    func file(for uri: String, session: Session) async throws(EncryptionFailure) -> JSONValue? {
        try await exclusively { () throws(EncryptionFailure) in
            try store(for: session).load("file:\(uri)", as: JSONValue.self)
        }
    }
}
