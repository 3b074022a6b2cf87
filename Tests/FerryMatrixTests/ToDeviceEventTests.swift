import FerryCore
import Testing
@testable import FerryMatrix

/// A sync's `to_device.events`: anyone can send them, so only well-formed ones are read, and not
/// without end.
struct ToDeviceEventTests {
    func event(_ sender: JSONValue, _ type: JSONValue, _ content: JSONValue) -> JSONValue {
        ["sender": sender, "type": type, "content": content]
    }

    @Test func wellFormedEventsAreReadInOrder() {
        let events: JSONValue = [
            event("@me:x", "m.key.verification.start", ["transaction_id": "t"]),
            event("@you:x", "m.room.encrypted", ["ciphertext": [:]]),
        ]
        let read = ToDeviceEvent.list(events)
        #expect(read.map(\.type) == ["m.key.verification.start", "m.room.encrypted"])
        #expect(read.first?.sender == "@me:x")
        #expect(read.first?.content["transaction_id"]?.stringValue == "t")
    }

    @Test func malformedEventsAreDroppedAndTheRestKept() {
        let events: JSONValue = [
            event(.int(1), "m.key.verification.start", [:]),
            event("@me:x", .null, [:]),
            event("@me:x", "m.key.verification.key", "not an object"),
            ["type": "m.key.verification.key", "content": [:]],
            "not an event",
            event("@me:x", "m.key.verification.mac", ["transaction_id": "t"]),
        ]
        #expect(ToDeviceEvent.list(events).map(\.type) == ["m.key.verification.mac"])
        #expect(ToDeviceEvent.list(nil).isEmpty)
        #expect(ToDeviceEvent.list(["events": []]).isEmpty)
    }

    @Test func atMostTwoHundredAreRead() {
        let many = JSONValue.array((0..<5_000).map { _ in event("@me:x", "m.dummy", [:]) })
        #expect(ToDeviceEvent.list(many).count == 200)
    }
}
