import FerryAccount
import FerryCore
import FerryCrypto
import FerryMatrix
import FerryOutbox
import Foundation
import Logging
import Testing
@testable import FerryEncryption

/// The encryption actor end to end against `TestHomeserver`, in milliseconds: what it asks the
/// server before each event, whom each room key goes to, and when the room's session is
/// replaced, as members and devices change between events. The Olm and Megolm formats are
/// checked against libolm and vodozemac by the integration tests; these check the decisions
/// between the requests, which those reach only through a real Synapse.
@Suite struct EncryptedSendFlowTests {
    let server = TestHomeserver()
    let encryption: Encryption
    let session = Session.underTest
    let directory: TemporaryFolder

    init() throws {
        directory = try TemporaryFolder()
        encryption = try .underTest(server: server, directory: directory)
    }

    /// Encrypts a text for `room`; returns the event's Megolm session id.
    private func send(_ text: String, to room: String, transactionID: String) async throws -> String {
        let words = "the words of message \(text)"
        let event = try await encryption.encrypt(
            ["msgtype": "m.text", "body": .string(words)], type: "m.room.message", roomID: room,
            transactionID: transactionID, session: session)
        #expect(event["algorithm"]?.stringValue == "m.megolm.v1.aes-sha2")
        // Base64 has no spaces: the words cannot be in the ciphertext by chance.
        #expect(event["ciphertext"]?.stringValue?.contains(words) == false)
        return try #require(event["session_id"]?.stringValue)
    }

    @Test("the first event shares the room key with every reader's device, once; the next needs no key")
    func firstEventSharesTheKey() async throws {
        server.makeRoom("!r:test", members: ["@me:test", "@bob:test"])
        let bob = server.addDevice("BOB1", of: "@bob:test")
        let mine = server.addDevice("OTHER", of: "@me:test")
        let first = try await send("one", to: "!r:test", transactionID: "t1")
        #expect(Set(server.keysSentTo) == [bob, mine])
        let second = try await send("two", to: "!r:test", transactionID: "t2")
        #expect(second == first)
        #expect(server.keysSentTo.count == 2, "no key sent again")
        #expect(server.requests.filter { $0.hasPrefix("POST keys/claim") }.count == 1)
    }

    @Test("a fallback key the server reports used is replaced once, and only once a minute")
    func usedFallbackKeyIsReplaced() async throws {
        server.makeRoom("!r:test", members: ["@me:test", "@bob:test"])
        server.addDevice("BOB1", of: "@bob:test")
        _ = try await send("one", to: "!r:test", transactionID: "t1")
        let first = server.fallbackKeysUploaded
        #expect(first.count == 1, "the device's first upload has its fallback key")

        server.claimFerrysFallbackKey()
        _ = try await send("two", to: "!r:test", transactionID: "t2")
        let replaced = server.fallbackKeysUploaded
        #expect(replaced.count == 2 && replaced[1] != replaced[0], "a new fallback key, under a new id")

        _ = try await send("three", to: "!r:test", transactionID: "t3")
        #expect(server.fallbackKeysUploaded == replaced, "an unused one stays")
        server.claimFerrysFallbackKey()
        _ = try await send("four", to: "!r:test", transactionID: "t4")
        #expect(server.fallbackKeysUploaded == replaced, "the clock stood still: not again within a minute")
    }

    @Test("a device id the server lists with other keys gets no new keys, and nothing is encrypted from it")
    func otherKeysUnderTheSameDeviceID() async throws {
        server.makeRoom("!r:test", members: ["@me:test", "@bob:test"])
        server.addDevice("BOB1", of: "@bob:test")
        server.listOtherKeys(for: session.deviceID, of: session.userID)
        await #expect(throws: EncryptionFailure.self) { try await send("one", to: "!r:test", transactionID: "t1") }
        #expect(!server.requests.contains("POST keys/upload"), "no key of a new identity went up")
        #expect(server.keysSentTo.isEmpty)
    }

    @Test("asked again for the same transaction, the same ciphertext: no index used twice")
    func sameTransactionSameEvent() async throws {
        server.makeRoom("!r:test", members: ["@me:test", "@bob:test"])
        server.addDevice("BOB1", of: "@bob:test")
        let made = try await encryption.encrypt(
            ["msgtype": "m.text", "body": "hi"], type: "m.room.message", roomID: "!r:test", transactionID: "t1",
            session: session)
        let again = try await encryption.encrypt(
            ["msgtype": "m.text", "body": "hi"], type: "m.room.message", roomID: "!r:test", transactionID: "t1",
            session: session)
        #expect(made == again)
        #expect(server.keysSentTo.count == 1)
    }

    @Test("a member who left before an event gets no key to it: the session is replaced")
    func leaverGetsNoKey() async throws {
        server.makeRoom("!r:test", members: ["@me:test", "@bob:test", "@cy:test"])
        let bob = server.addDevice("BOB1", of: "@bob:test")
        let cy = server.addDevice("CY1", of: "@cy:test")
        let before = try await send("before", to: "!r:test", transactionID: "t1")
        server.set("@cy:test", "leave", in: "!r:test")
        let after = try await send("after", to: "!r:test", transactionID: "t2")
        #expect(after != before)
        let sent = server.keysSentTo
        #expect(sent.filter { $0 == cy }.count == 1, "only the first session's key")
        #expect(sent.filter { $0 == bob }.count == 2, "the first key and the new one")
    }

    @Test("a reader's new device gets the current key, without a new session")
    func newDeviceJoinsTheSession() async throws {
        server.makeRoom("!r:test", members: ["@me:test", "@bob:test"])
        let phone = server.addDevice("BOB1", of: "@bob:test")
        let first = try await send("one", to: "!r:test", transactionID: "t1")
        let laptop = server.addDevice("BOB2", of: "@bob:test")
        let second = try await send("two", to: "!r:test", transactionID: "t2")
        #expect(second == first)
        #expect(server.keysSentTo == [phone, laptop])
    }

    @Test("a device whose keys changed under its id ends the session and gets no key, now or later")
    func rekeyedDeviceGetsNothing() async throws {
        server.makeRoom("!r:test", members: ["@me:test", "@bob:test"])
        let old = server.addDevice("BOB1", of: "@bob:test")
        let laptop = server.addDevice("BOB2", of: "@bob:test")
        let first = try await send("one", to: "!r:test", transactionID: "t1")
        server.addDevice("BOB1", of: "@bob:test")
        let second = try await send("two", to: "!r:test", transactionID: "t2")
        #expect(second != first, "the old keys are gone from the room: a new session")
        #expect(
            server.keysSentTo.sorted() == [old, laptop, laptop].sorted(),
            "the other device gets the new key; the changed one none")
        server.addDevice("BOB3", of: "@bob:test")
        _ = try await send("three", to: "!r:test", transactionID: "t3")
        #expect(server.keysSentTo.count == 4, "a device listed later is still told, the changed one still not")
    }

    @Test("a device with no one-time key left is told the key is withheld (m.no_olm), once")
    func unreachableDeviceIsToldOnce() async throws {
        server.makeRoom("!r:test", members: ["@me:test", "@bob:test"])
        let reachable = server.addDevice("BOB1", of: "@bob:test")
        server.addDevice("BOB2", of: "@bob:test")
        server.exhaust("BOB2", of: "@bob:test")
        _ = try await send("one", to: "!r:test", transactionID: "t1")
        _ = try await send("two", to: "!r:test", transactionID: "t2")
        #expect(server.keysSentTo == [reachable])
        #expect(server.withheld == ["@bob:test|BOB2|m.no_olm"])
    }

    @Test("the room's rotation period counts messages: a new session after that many")
    func rotationByMessages() async throws {
        server.makeRoom("!r:test", members: ["@me:test", "@bob:test"], rotationMessages: 2)
        server.addDevice("BOB1", of: "@bob:test")
        let one = try await send("1", to: "!r:test", transactionID: "t1")
        let two = try await send("2", to: "!r:test", transactionID: "t2")
        let three = try await send("3", to: "!r:test", transactionID: "t3")
        #expect(one == two && three != two)
        #expect(server.keysSentTo.count == 2)
    }

    @Test("each event asks one sync first; the room's state and devices are read only when it changed")
    func oneSyncPerEvent() async throws {
        server.makeRoom("!r:test", members: ["@me:test", "@bob:test"])
        server.addDevice("BOB1", of: "@bob:test")
        _ = try await send("one", to: "!r:test", transactionID: "t1")
        let before = server.requests.count
        _ = try await send("two", to: "!r:test", transactionID: "t2")
        #expect(Array(server.requests.dropFirst(before)) == ["GET sync"])
    }
}

/// A directory of its own, removed with the test.
final class TemporaryFolder: Sendable {
    let path: String

    init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}
