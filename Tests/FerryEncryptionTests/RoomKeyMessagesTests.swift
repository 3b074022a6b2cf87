import FerryCore
import FerryCrypto
import Foundation
import Testing
@testable import FerryEncryption

/// The Olm side of handing out a room key, from plain values: sessions started from a claim
/// answer (and refused from keys a server made up), and the requests that carry the key, each
/// opened by the receiving device's own account.
@Suite struct RoomKeyMessagesTests {
    let ferry = OlmAccount()
    var sender: EncryptedEvents.Sender { .init(userID: "@me:x", deviceID: "ME", account: ferry) }
    let roomKey: JSONValue = [
        "algorithm": "m.megolm.v1.aes-sha2", "room_id": "!r:x", "session_id": "s", "session_key": "k",
    ]

    /// A reader's device with one one-time key on the server.
    struct Reader {
        var account = OlmAccount()
        let identity: DeviceIdentity
        let user: String, device: String

        init(_ user: String, _ device: String) {
            self.user = user
            self.device = device
            account.generateOneTimeKeys(1)
            identity = try! DeviceIdentity(
                verifying: account.deviceKeys(userID: user, deviceID: device), userID: user, deviceID: device)
        }

        /// What `/keys/claim` answers for this device: its key signed by `signer` (itself by default).
        func claimed(signedBy signer: OlmAccount? = nil) -> [String: JSONValue] {
            var keys = account.unpublishedKeys(userID: user, deviceID: device).oneTimeKeys
            if let signer {
                keys = keys.mapValues { signed in
                    signer.signed(["key": signed["key"]!], userID: user, deviceID: device)
                }
            }
            return [user: [device: .object(keys)]]
        }
    }

    static func answer(_ parts: [[String: JSONValue]]) -> JSONValue {
        var answer: [String: JSONValue] = [:]
        for part in parts {
            for (user, devices) in part {
                var merged = answer[user]?.objectValue ?? [:]
                merged.merge(devices.objectValue!) { $1 }
                answer[user] = .object(merged)
            }
        }
        return .object(answer)
    }

    @Test func sessionsStartOnlyFromAKeyTheDeviceSigned() {
        let bob = Reader("@bob:x", "B1"), eve = Reader("@eve:x", "E1"), cy = Reader("@cy:x", "C1")
        // Eve's key signed by another key than her device's (a server's own key), Cy's missing.
        let claimed = Self.answer([bob.claimed(), eve.claimed(signedBy: OlmAccount())])
        let sessions = KeySharing.sessions(
            from: claimed, for: [bob.identity, eve.identity, cy.identity], account: ferry)
        #expect(Set(sessions.keys) == [bob.identity.curve25519])
    }

    @Test func theKeyGoesInBatchesAndEachDeviceOpensItsOwn() throws {
        var readers = [Reader("@bob:x", "B1"), Reader("@bob:x", "B2"), Reader("@cy:x", "C1")]
        var sessions = KeySharing.sessions(
            from: Self.answer(readers.map { $0.claimed() }), for: readers.map(\.identity), account: ferry)
        let batches = try KeySharing.batches(
            roomKey, to: readers.map(\.identity), sessions: &sessions, sender: sender, size: 2)
        #expect(batches.map(\.devices.count) == [2, 1])
        // Each session's new state is among the changes kept before its request.
        #expect(batches.flatMap(\.changes).count == 3)

        for index in readers.indices {
            let reader = readers[index]
            let batch = try #require(batches.first { $0.devices.contains(reader.identity) })
            let message = try #require(batch.messages[reader.user]?[reader.device])
            #expect(message["sender_key"]?.stringValue == ferry.curve25519)
            let ciphertext = try #require(message["ciphertext"]?[reader.identity.curve25519])
            #expect(ciphertext["type"] == .int(0))
            let body = try #require(ciphertext["body"]?.stringValue)
            let opened = try OlmSession.inbound(
                to: &readers[index].account, theirIdentityKey: ferry.curve25519, preKeyMessage: body)
            let plaintext = try JSONDecoder().decode(JSONValue.self, from: Data(opened.plaintext))
            #expect(plaintext["type"] == "m.room_key")
            #expect(plaintext["content"] == roomKey)
            #expect(plaintext["recipient"]?.stringValue == reader.user)
        }
    }

    @Test func aDeviceWithoutASessionIsLeftOutOfTheRequests() throws {
        let bob = Reader("@bob:x", "B1"), cy = Reader("@cy:x", "C1")
        var sessions = KeySharing.sessions(from: Self.answer([bob.claimed()]), for: [bob.identity], account: ferry)
        let batches = try KeySharing.batches(
            roomKey, to: [bob.identity, cy.identity], sessions: &sessions, sender: sender)
        #expect(batches.count == 1 && batches[0].devices == [bob.identity])
        #expect(batches[0].messages["@cy:x"] == nil)
    }
}
