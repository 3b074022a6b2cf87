import FerryCore
import Testing

@testable import FerryCrypto

/// The checks on an Olm to-device message addressed to Ferry: the envelope for our key, and a
/// payload that must name the sender the server named and this very device.
@Suite struct IncomingOlmTests {
    let ours = OlmAccount()
    let theirs = OlmAccount()

    func payload(_ changes: [String: JSONValue] = [:]) -> [UInt8] {
        var value: [String: JSONValue] = [
            "type": "m.dummy", "content": [:], "sender": "@bob:test", "sender_device": "BOB",
            "keys": ["ed25519": .string(theirs.ed25519)], "recipient": "@me:test",
            "recipient_keys": ["ed25519": .string(ours.ed25519)],
        ]
        value.merge(changes) { _, new in new }
        return CanonicalJSON.encode(.object(value))
    }

    func read(_ bytes: [UInt8]) throws(CryptoError) -> IncomingOlm.Payload {
        try IncomingOlm.payload(bytes, sender: "@bob:test", recipient: "@me:test", recipientEd25519: ours.ed25519)
    }

    @Test("a payload for this device from the named sender is read, with the key its sender claims")
    func goodPayload() throws {
        let read = try read(payload())
        #expect(read.type == "m.dummy" && read.senderEd25519 == theirs.ed25519)
    }

    @Test(
        "a payload for another user or device, from another sender, or without its parts is refused",
        arguments: [
            ["recipient": "@eve:test"], ["recipient_keys": ["ed25519": "AAAA"]], ["sender": "@eve:test"],
            ["keys": [:]], ["content": "text"], ["type": .null],
        ] as [[String: JSONValue]])
    func badPayloads(_ change: [String: JSONValue]) {
        #expect(throws: CryptoError.self) { try read(payload(change)) }
    }

    @Test("not JSON is refused")
    func notJSON() {
        #expect(throws: CryptoError.self) { try read(Array("not json".utf8)) }
    }

    @Test("the envelope is the ciphertext for our identity key, of type 0 or 1, from a 32-byte key")
    func envelopes() throws {
        let good: JSONValue = [
            "algorithm": "m.olm.v1.curve25519-aes-sha2", "sender_key": .string(theirs.curve25519),
            "ciphertext": .object([ours.curve25519: ["type": 1, "body": "AwoA"]]),
        ]
        #expect(
            try IncomingOlm.envelope(good, ourCurve25519: ours.curve25519)
                == .init(senderKey: theirs.curve25519, type: 1, body: "AwoA"))
        #expect(throws: CryptoError.self) { try IncomingOlm.envelope(good, ourCurve25519: theirs.curve25519) }
        var other = good.objectValue!
        other["algorithm"] = "m.megolm.v1.aes-sha2"
        #expect(throws: CryptoError.self) { try IncomingOlm.envelope(.object(other), ourCurve25519: ours.curve25519) }
        other = good.objectValue!
        other["ciphertext"] = .object([ours.curve25519: ["type": 2, "body": "AwoA"]])
        #expect(throws: CryptoError.self) { try IncomingOlm.envelope(.object(other), ourCurve25519: ours.curve25519) }
        other = good.objectValue!
        other["sender_key"] = "short"
        #expect(throws: CryptoError.self) { try IncomingOlm.envelope(.object(other), ourCurve25519: ours.curve25519) }
    }
}
