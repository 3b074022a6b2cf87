import Crypto
import FerryAccount
import FerryCore
import FerryCrypto
import FerryMatrix
import FerryOutbox
import Foundation
import Logging
import Synchronization
import Testing
@testable import FerryEncryption

/// The room keys Ferry puts into the account's key backup, against `TestHomeserver`: which
/// backups get them, when, and what happens when the server fails or the backup is replaced.
/// The format itself is restored by libolm and vodozemac in the integration tests.
@Suite struct KeyBackupFlowTests {
    let server = TestHomeserver()
    let encryption: Encryption
    let session = Session.underTest
    let directory: TemporaryFolder
    let now = Clock()
    let master = Curve25519.Signing.PrivateKey()

    final class Clock: Sendable {
        let microseconds = Mutex<Int64>(1_000_000)
        func pass(minutes: Int64) { microseconds.withLock { $0 += minutes * 60_000_000 } }
    }

    init() throws {
        directory = try TemporaryFolder()
        let now = now
        encryption = try .underTest(server: server, directory: directory, clock: { now.microseconds.withLock { $0 } })
        server.makeRoom("!r:test", members: ["@me:test", "@bob:test"])
        server.addDevice("BOB1", of: "@bob:test")
    }

    private var masterKey: String { UnpaddedBase64.encode(master.publicKey.rawRepresentation) }

    /// A backup's auth_data with a fresh public key, signed by `signer` as a master key.
    private func authData(signedBy signer: Curve25519.Signing.PrivateKey?) throws -> JSONValue {
        let publicKey = UnpaddedBase64.encode(Curve25519.KeyAgreement.PrivateKey().publicKey.rawRepresentation)
        var data: [String: JSONValue] = ["public_key": .string(publicKey)]
        if let signer {
            let id = "ed25519:" + UnpaddedBase64.encode(signer.publicKey.rawRepresentation)
            let signature = try signer.signature(for: CanonicalJSON.encode(.object(data)))
            data["signatures"] = ["@me:test": .object([id: .string(UnpaddedBase64.encode(signature))])]
        }
        return .object(data)
    }

    /// Ferry trusts `master` as the account's master key (as after a recovery-key verification).
    private func trustMaster() async throws {
        server.listMasterKey(masterKey, of: "@me:test")
        try await encryption.store(for: session).write([
            CryptoStore.set(Encryption.trustedMaster(session), masterKey)
        ])
    }

    @discardableResult
    private func send(_ transactionID: String) async throws -> String {
        let event = try await encryption.encrypt(
            ["msgtype": "m.text", "body": "hello"], type: "m.room.message", roomID: "!r:test",
            transactionID: transactionID, session: session)
        return try #require(event["session_id"]?.stringValue)
    }

    @Test("a trusted backup gets a room's session once, from its first index; the next event asks nothing more")
    func trustedBackupGetsTheSession() async throws {
        try await trustMaster()
        server.makeBackup(version: "1", authData: try authData(signedBy: master))
        let id = try await send("t1")
        let data = try #require(server.backedUp["!r:test|\(id)|1"])
        #expect(data["first_message_index"]?.intValue == 0)
        #expect(data["session_data"]?["ephemeral"]?.stringValue != nil)
        let before = server.requests.count
        #expect(try await send("t2") == id)
        #expect(Array(server.requests.dropFirst(before)) == ["GET sync"])
    }

    @Test(
        "a backup Ferry cannot trust gets nothing, and the event still goes",
        arguments: ["unsigned", "another master key", "no master key trusted", "another algorithm"])
    func untrustedBackupGetsNothing(_ case: String) async throws {
        if `case` != "no master key trusted" { try await trustMaster() }
        switch `case` {
        case "unsigned": server.makeBackup(version: "1", authData: try authData(signedBy: nil))
        case "another master key":
            server.makeBackup(version: "1", authData: try authData(signedBy: Curve25519.Signing.PrivateKey()))
        case "another algorithm":
            server.makeBackup(
                version: "1", authData: try authData(signedBy: master), algorithm: "m.megolm_backup.v1.aes-hmac-sha2")
        default: server.makeBackup(version: "1", authData: try authData(signedBy: master))
        }
        try await send("t1")
        #expect(server.backedUp.isEmpty)
        #expect(!server.requests.contains { $0.hasPrefix("PUT room_keys") })
    }

    @Test("a backup that fails does not fail the event; the session goes up from its first index with the next")
    func failedBackupIsTriedAgain() async throws {
        try await trustMaster()
        server.makeBackup(version: "1", authData: try authData(signedBy: master))
        server.failBackupPuts(1)
        let id = try await send("t1")
        #expect(server.backedUp.isEmpty)
        try await send("t2")
        #expect(server.backedUp["!r:test|\(id)|1"]?["first_message_index"]?.intValue == 0)
        let puts = server.requests.filter { $0.hasPrefix("PUT room_keys") }.count
        try await send("t3")
        #expect(server.requests.filter { $0.hasPrefix("PUT room_keys") }.count == puts, "not put again")
    }

    @Test("a backup made anew elsewhere gets the room's current session within ten minutes, from its first index")
    func newBackupVersionGetsTheSession() async throws {
        try await trustMaster()
        server.makeBackup(version: "1", authData: try authData(signedBy: master))
        let id = try await send("t1")
        server.makeBackup(version: "2", authData: try authData(signedBy: master))
        try await send("t2")
        #expect(server.backedUp["!r:test|\(id)|2"] == nil, "the backup is asked again after ten minutes, not per event")
        now.pass(minutes: 11)
        #expect(try await send("t3") == id)
        #expect(server.backedUp["!r:test|\(id)|2"]?["first_message_index"]?.intValue == 0)
    }

    @Test("after an identity reset elsewhere (the server lists another master key), the old one vouches for no backup")
    func masterKeyNoLongerListed() async throws {
        try await trustMaster()
        server.listMasterKey(
            UnpaddedBase64.encode(Curve25519.Signing.PrivateKey().publicKey.rawRepresentation), of: "@me:test")
        server.makeBackup(version: "1", authData: try authData(signedBy: master))
        try await send("t1")
        #expect(server.backedUp.isEmpty)
    }

    @Test("a server that cannot say which backup it has is asked again in a minute, not before every event")
    func failingBackupQuestionIsCached() async throws {
        try await trustMaster()
        server.failBackupVersion(true)
        try await send("t1")
        try await send("t2")
        #expect(server.requests.filter { $0 == "GET room_keys/version" }.count == 1)
        server.failBackupVersion(false)
        server.makeBackup(version: "1", authData: try authData(signedBy: master))
        now.pass(minutes: 2)
        let id = try await send("t3")
        #expect(server.backedUp["!r:test|\(id)|1"] != nil)
    }

    @Test("no backup at all: one question, then none for ten minutes")
    func noBackupIsAskedRarely() async throws {
        try await send("t1")
        try await send("t2")
        #expect(server.requests.filter { $0 == "GET room_keys/version" }.count == 1)
    }
}
