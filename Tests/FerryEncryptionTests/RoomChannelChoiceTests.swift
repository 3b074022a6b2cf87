import FerryAccount
import FerryCore
import FerryMatrix
import FerryOutbox
import Foundation
import Logging
import Testing
@testable import FerryEncryption

/// The service's homeserver hands out a room's channel by what Ferry holds first: a room it has
/// encrypted for (a `room:` record) gets the encrypted channel whatever the server says now,
/// and a plain channel made before Ferry encrypted there refuses to write in the clear after.
/// Nothing here reaches a network: choosing a channel and refusing are decided before any request.
@Suite struct RoomChannelChoiceTests {
    let directory: String
    let outbox: Outbox
    let records: AccountCryptoRecords
    let homeserver: EncryptingHomeserver

    init() throws {
        directory =
            FileManager.default.temporaryDirectory.appendingPathComponent("ferry-channel-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        outbox = try Outbox(path: directory + "/ferry.sqlite3")
        records = outbox.cryptoRecords(of: "@me:test")
        let logger = Logger(label: "test")
        let encryption = Encryption(
            records: records, vault: .encryptionKey(stateDirectory: directory, logger: logger),
            logger: logger, clock: { 1_000 })
        // A loopback port nothing listens on: a request that slipped through would fail as a
        // transport error, not as the refusal these tests expect.
        let session = Session(
            userID: "@me:test", homeserver: "http://127.0.0.1:9", deviceID: "D", accessToken: "t", signIn: 1)
        homeserver = EncryptingHomeserver(session: session, encryption: encryption)
    }

    @Test func theServersAnswerChoosesWhileFerryHasNotEncryptedThere() throws {
        #expect(try homeserver.channel(to: "!a", serverSaysEncrypted: false).isEncrypted == false)
        #expect(try homeserver.channel(to: "!a", serverSaysEncrypted: true).isEncrypted == true)
    }

    @Test func aRoomEncryptedForBeforeGetsItsEncryptedChannelWhateverTheServerSays() throws {
        try records.writeCryptoRecords([.init(name: "room:!a", sealed: [1, 2, 3])], at: 1)
        #expect(try homeserver.channel(to: "!a", serverSaysEncrypted: false).isEncrypted == true)
        #expect(try homeserver.channel(to: "!b", serverSaysEncrypted: false).isEncrypted == false)
    }

    @Test func aPlainChannelRefusesToWriteOnceFerryHasEncryptedForTheRoom() async throws {
        let channel = try homeserver.channel(to: "!a", serverSaysEncrypted: false)
        try records.writeCryptoRecords([.init(name: "room:!a", sealed: [1])], at: 1)
        do {
            _ = try await channel.send(MessageContent(msgtype: "m.text", body: "secret"), transactionID: "t1")
            Issue.record("a plain event went to a room Ferry encrypts for")
        } catch {
            #expect(error.errcode == MatrixError.encryptionErrcode)
        }
        do {
            _ = try await channel.upload(
                path: "/dev/null", size: 0, contentType: "text/plain", filename: "a.txt",
                available: nil, progress: { _ in })
            Issue.record("a plain upload went up for a room Ferry encrypts for")
        } catch {
            #expect(error.errcode == MatrixError.encryptionErrcode)
        }
    }

    @Test func anUploadServesOnlyRoomsOfItsKind() throws {
        try records.writeCryptoRecords([.init(name: "file:mxc://test/enc", sealed: [1])], at: 1)
        let plain = try homeserver.channel(to: "!p", serverSaysEncrypted: false)
        let encrypted = try homeserver.channel(to: "!e", serverSaysEncrypted: true)
        #expect(plain.accepts(upload: "mxc://test/plain") && !plain.accepts(upload: "mxc://test/enc"))
        #expect(encrypted.accepts(upload: "mxc://test/enc") && !encrypted.accepts(upload: "mxc://test/plain"))
    }

    @Test("a room record that cannot be read gives no channel: never plain on a guess")
    func unreadableRecordsFailClosed() async throws {
        let logger = Logger(label: "test")
        let encryption = Encryption(
            records: UnreadableRecords(), vault: .encryptionKey(stateDirectory: directory, logger: logger),
            logger: logger, clock: { 1_000 })
        let session = Session(
            userID: "@me:test", homeserver: "http://127.0.0.1:9", deviceID: "D", accessToken: "t", signIn: 1)
        let unreadable = EncryptingHomeserver(session: session, encryption: encryption)
        #expect(throws: EncryptionFailure.self) { try encryption.hasEncrypted(for: "!a") }
        // No channel either way (encrypting could not read its sessions anyway): the destination
        // fails with EncryptedRoom, nothing went out, and Retry takes it up again.
        for encrypted in [false, true] {
            let error = #expect(throws: MatrixError.self) {
                try unreadable.channel(to: "!a", serverSaysEncrypted: encrypted)
            }
            #expect(error?.message.contains("disk I/O error") == true)
        }
    }
}

/// Records on a disk that fails every read: what `Encryption` decides from them must fail closed.
private struct UnreadableRecords: CryptoRecordStore {
    private var failure: OutboxError { OutboxError(reason: "disk I/O error", code: 10) }
    func cryptoRecord(_ name: String) throws(OutboxError) -> [UInt8]? { throw failure }
    func hasCryptoRecord(_ name: String) throws(OutboxError) -> Bool { throw failure }
    func cryptoRecords(prefix: String) throws(OutboxError) -> [(name: String, sealed: [UInt8], updated: Int64)] {
        throw failure
    }
    func writeCryptoRecords(_ changes: [CryptoRecordChange], at time: Int64) throws(OutboxError) { throw failure }
    func deleteCryptoRecords() throws(OutboxError) { throw failure }
    func hasCryptoRecords() throws(OutboxError) -> Bool { throw failure }
}
