import FerryAccount
import FerryCore
import FerryCrypto
import FerryMatrix
import FerryOutbox
import Foundation
import Logging
import Testing
@testable import FerryEncryption

/// Olm messages to Ferry's device, against `TestHomeserver`, from devices that are real Olm
/// accounts: a verification message that came encrypted reaches the verification inbox, and one
/// whose sender claims another device's key does not. (Sessions with libolm and vodozemac, the
/// wedged-session repair and room-key requests are in the integration tests.)
@Suite struct ToDeviceInboxTests {
    let server = TestHomeserver()
    let encryption: Encryption
    let session = Session.underTest
    let directory: TemporaryFolder
    let records = InMemoryCryptoRecords()

    init() throws {
        directory = try TemporaryFolder()
        encryption = try .underTest(server: server, directory: directory, records: records)
    }

    /// An Olm message from the person's other device OTHER to Ferry's device, its payload as the
    /// spec has it; `claiming` is the Ed25519 key the payload says OTHER has (its own unless a
    /// test forges another).
    private func olmMessage(
        type: String, content: JSONValue, claiming: String? = nil, from user: String = "@me:test",
        device: String = "OTHER"
    ) async throws -> JSONValue {
        let ferry = try await encryption.prepareDevice(for: session)
        if server.account(device, of: user) == nil { server.addDevice(device, of: user) }
        let other = try #require(server.account(device, of: user))
        let oneTime = try #require(server.claimFerrysOneTimeKey())
        var olm = try OlmSession.outbound(from: other, theirIdentityKey: ferry.curve25519, theirOneTimeKey: oneTime)
        let payload: JSONValue = [
            "type": .string(type), "content": content, "sender": .string(user), "sender_device": .string(device),
            "keys": ["ed25519": .string(claiming ?? other.ed25519)], "recipient": "@me:test",
            "recipient_keys": ["ed25519": .string(ferry.ed25519)],
        ]
        let (messageType, body) = try olm.encrypt(CanonicalJSON.encode(payload))
        return [
            "algorithm": "m.olm.v1.curve25519-aes-sha2", "sender_key": .string(other.curve25519),
            "ciphertext": .object([ferry.curve25519: ["type": .int(Int64(messageType)), "body": .string(body)]]),
        ]
    }

    private func received(after message: JSONValue, from user: String = "@me:test") async throws -> [ToDeviceEvent] {
        server.sendToFerry(type: "m.room.encrypted", sender: user, content: message)
        let token = await encryption.listenForVerification(userID: "@me:test")
        return try await encryption.verificationMessages(session: session, wait: 0, token: token)
    }

    @Test("a verification message that came encrypted reaches the verification inbox, decrypted")
    func encryptedVerificationMessage() async throws {
        let content: JSONValue = ["transaction_id": "t1", "from_device": "OTHER", "methods": ["m.sas.v1"]]
        let received = try await received(
            after: try await olmMessage(type: "m.key.verification.ready", content: content))
        #expect(received.map(\.type) == ["m.key.verification.ready"])
        #expect(received.first?.content == content && received.first?.sender == "@me:test")
    }

    @Test("a message whose payload claims another Ed25519 key than its device's is dropped")
    func forgedSenderKey() async throws {
        let forged = UnpaddedBase64.encode(Array(repeating: 7, count: 32))
        let message = try await olmMessage(
            type: "m.key.verification.ready", content: ["transaction_id": "t1"], claiming: forged)
        #expect(try await received(after: message).isEmpty)
    }

    @Test("a message that does not decrypt reaches no inbox, and its device gets a new session and m.dummy")
    func undecryptable() async throws {
        // Ferry holds a session with OTHER (OTHER started it)
        _ = try await received(after: try await olmMessage(type: "m.dummy", content: [:]))
        let ferry = try await encryption.prepareDevice(for: session)
        let other = try #require(server.account("OTHER", of: "@me:test"))
        let junk: JSONValue = [
            "algorithm": "m.olm.v1.curve25519-aes-sha2", "sender_key": .string(other.curve25519),
            "ciphertext": .object([ferry.curve25519: ["type": 1, "body": "AwoAAAAAAAAAAAAAAAAA"]]),
        ]
        #expect(try await received(after: junk).isEmpty)
        let dummies = server.toDevice.filter { $0.type == "m.room.encrypted" }
        #expect(dummies.count == 1 && dummies.first?.messages["@me:test"]?["OTHER"] != nil)
    }

    @Test("junk naming a device Ferry holds no session with repairs nothing, and costs no request")
    func undecryptableFromAStranger() async throws {
        let ferry = try await encryption.prepareDevice(for: session)
        server.addDevice("EVE1", of: "@eve:test")
        let eve = try #require(server.account("EVE1", of: "@eve:test"))
        let before = server.requests.count
        let junk: JSONValue = [
            "algorithm": "m.olm.v1.curve25519-aes-sha2", "sender_key": .string(eve.curve25519),
            "ciphertext": .object([ferry.curve25519: ["type": 1, "body": "AwoAAAAAAAAAAAAAAAAA"]]),
        ]
        #expect(try await received(after: junk, from: "@eve:test").isEmpty)
        #expect(server.toDevice.isEmpty)
        #expect(Array(server.requests.dropFirst(before)) == ["GET sync"])
    }

    @Test("a member whose device started a new session and who then left still ends the room's session")
    func newSessionDoesNotHideALeave() async throws {
        server.makeRoom("!r:test", members: ["@me:test", "@bob:test"])
        server.addDevice("BOB1", of: "@bob:test")
        let first = try await encryption.encrypt(
            ["msgtype": "m.text", "body": "1"], type: "m.room.message", roomID: "!r:test", transactionID: "t1",
            session: session)
        server.sendToFerry(
            type: "m.room.encrypted", sender: "@bob:test",
            content: try await olmMessage(type: "m.dummy", content: [:], from: "@bob:test", device: "BOB1"))
        server.set("@bob:test", "leave", in: "!r:test")
        let second = try await encryption.encrypt(
            ["msgtype": "m.text", "body": "2"], type: "m.room.message", roomID: "!r:test", transactionID: "t2",
            session: session)
        #expect(first["session_id"] != second["session_id"])
    }

    @Test("a message handed over again (a sync from no token after a restart) is acted on once, and repairs nothing")
    func replayedMessage() async throws {
        let message = try await olmMessage(type: "m.key.verification.ready", content: ["transaction_id": "t1"])
        #expect(try await received(after: message).count == 1)
        #expect(try await received(after: message).isEmpty)
        #expect(server.toDevice.isEmpty, "no m.dummy for a replay")
    }

    @Test("an identity key copied into a stranger's device does not get the stranger Ferry's session with its owner")
    func copiedIdentityKey() async throws {
        // Ferry holds a session with OTHER, started by OTHER
        _ = try await received(after: try await olmMessage(type: "m.dummy", content: [:]))
        let other = try #require(server.account("OTHER", of: "@me:test"))
        let name = "olm:\(other.curve25519)"
        let before = records.cryptoRecord(name)
        // Eve lists a device of hers with OTHER's identity key, and sends junk naming it
        server.addDevice("EVE1", of: "@eve:test", copyingIdentityKeyOf: other)
        let ferry = try await encryption.prepareDevice(for: session)
        server.sendToFerry(
            type: "m.room.encrypted", sender: "@eve:test",
            content: [
                "algorithm": "m.olm.v1.curve25519-aes-sha2", "sender_key": .string(other.curve25519),
                "ciphertext": .object([ferry.curve25519: ["type": 1, "body": "AwoAAAAAAAAAAAAAAAAA"]]),
            ])
        _ = try await received(after: [:])
        #expect(server.toDevice.isEmpty, "no new session, no m.dummy to Eve")
        #expect(records.cryptoRecord(name) == before)
    }

    @Test("a device that started a new session gets the room's current key again, over it")
    func newSessionGetsTheKeyAgain() async throws {
        server.makeRoom("!r:test", members: ["@me:test"])
        server.addDevice("OTHER", of: "@me:test")
        let other = try #require(server.account("OTHER", of: "@me:test"))
        let first = try await encryption.encrypt(
            ["msgtype": "m.text", "body": "1"], type: "m.room.message", roomID: "!r:test", transactionID: "t1",
            session: session)
        #expect(server.keysSentTo == [other.curve25519])
        server.sendToFerry(
            type: "m.room.encrypted", sender: "@me:test", content: try await olmMessage(type: "m.dummy", content: [:]))
        let second = try await encryption.encrypt(
            ["msgtype": "m.text", "body": "2"], type: "m.room.message", roomID: "!r:test", transactionID: "t2",
            session: session)
        #expect(first["session_id"] == second["session_id"])
        #expect(server.keysSentTo == [other.curve25519, other.curve25519])
    }

    @Test("a normal Olm message handed over again is known, not taken for a wedged session")
    func replayedNormalMessage() async throws {
        // OTHER starts a session with Ferry, and Ferry answers on it (a room key)
        server.makeRoom("!r:test", members: ["@me:test"])
        let ferry = try await encryption.prepareDevice(for: session)
        server.addDevice("OTHER", of: "@me:test")
        let other = try #require(server.account("OTHER", of: "@me:test"))
        var olm = try OlmSession.outbound(
            from: other, theirIdentityKey: ferry.curve25519,
            theirOneTimeKey: try #require(server.claimFerrysOneTimeKey()))
        func message(_ type: String, _ content: JSONValue) throws -> JSONValue {
            let payload: JSONValue = [
                "type": .string(type), "content": content, "sender": "@me:test", "sender_device": "OTHER",
                "keys": ["ed25519": .string(other.ed25519)], "recipient": "@me:test",
                "recipient_keys": ["ed25519": .string(ferry.ed25519)],
            ]
            let (kind, body) = try olm.encrypt(CanonicalJSON.encode(payload))
            return [
                "algorithm": "m.olm.v1.curve25519-aes-sha2", "sender_key": .string(other.curve25519),
                "ciphertext": .object([ferry.curve25519: ["type": .int(Int64(kind)), "body": .string(body)]]),
            ]
        }
        server.sendToFerry(type: "m.room.encrypted", sender: "@me:test", content: try message("m.dummy", [:]))
        _ = try await encryption.encrypt(
            ["msgtype": "m.text", "body": "1"], type: "m.room.message", roomID: "!r:test", transactionID: "t1",
            session: session)
        let answer = try #require(
            server.toDevice.last?.messages["@me:test"]?["OTHER"]?["ciphertext"]?[other.curve25519])
        #expect(answer["type"]?.intValue == 1)
        _ = try olm.decrypt(type: 1, body: try #require(answer["body"]?.stringValue))
        let sent = server.toDevice.count

        // A normal message from OTHER, handed over twice
        let ready = try message("m.key.verification.ready", ["transaction_id": "t1"])
        #expect(ready["ciphertext"]?[ferry.curve25519]?["type"]?.intValue == 1)
        #expect(try await received(after: ready).count == 1)
        #expect(try await received(after: ready).isEmpty)
        #expect(server.toDevice.count == sent, "no m.dummy: the session is not wedged")
    }
}
