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
    let session = Session(
        userID: "@me:test", homeserver: "http://127.0.0.1:9", deviceID: "FERRYDEVICE", accessToken: "t", signIn: 1)
    let directory: TemporaryFolder

    init() throws {
        directory = try TemporaryFolder()
        try Data(StateSeal().keyBytes).base64EncodedString().write(
            toFile: directory.path + "/encryption-key", atomically: true, encoding: .utf8)
        let logger = Logger(label: "test")
        encryption = Encryption(
            records: InMemoryCryptoRecords(), vault: .encryptionKey(stateDirectory: directory.path, logger: logger),
            logger: logger, clock: { 1_000_000 }, responder: server.responder)
    }

    /// An Olm message from the person's other device OTHER to Ferry's device, its payload as the
    /// spec has it; `claiming` is the Ed25519 key the payload says OTHER has (its own unless a
    /// test forges another).
    private func olmMessage(type: String, content: JSONValue, claiming: String? = nil) async throws -> JSONValue {
        let ferry = try await encryption.prepareDevice(for: session)
        server.addDevice("OTHER", of: "@me:test")
        let other = try #require(server.account("OTHER", of: "@me:test"))
        let oneTime = try #require(server.claimFerrysOneTimeKey())
        var olm = try OlmSession.outbound(from: other, theirIdentityKey: ferry.curve25519, theirOneTimeKey: oneTime)
        let payload: JSONValue = [
            "type": .string(type), "content": content, "sender": "@me:test", "sender_device": "OTHER",
            "keys": ["ed25519": .string(claiming ?? other.ed25519)], "recipient": "@me:test",
            "recipient_keys": ["ed25519": .string(ferry.ed25519)],
        ]
        let (messageType, body) = try olm.encrypt(CanonicalJSON.encode(payload))
        return [
            "algorithm": "m.olm.v1.curve25519-aes-sha2", "sender_key": .string(other.curve25519),
            "ciphertext": .object([ferry.curve25519: ["type": .int(Int64(messageType)), "body": .string(body)]]),
        ]
    }

    private func received(after message: JSONValue) async throws -> [ToDeviceEvent] {
        server.sendToFerry(type: "m.room.encrypted", sender: "@me:test", content: message)
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
        var message = try await olmMessage(type: "m.key.verification.ready", content: ["transaction_id": "t1"])
        let ferry = try await encryption.prepareDevice(for: session)
        message = [
            "algorithm": message["algorithm"]!, "sender_key": message["sender_key"]!,
            "ciphertext": .object([ferry.curve25519: ["type": 1, "body": "AwoAAAAAAAAAAAAAAAAA"]]),
        ]
        #expect(try await received(after: message).isEmpty)
        let dummies = server.toDevice.filter { $0.type == "m.room.encrypted" }
        #expect(dummies.count == 1 && dummies.first?.messages["@me:test"]?["OTHER"] != nil)
    }
}
