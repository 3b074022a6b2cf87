@testable import FerryCrypto
import Testing

struct MegolmRatchetTests {
    static let start = MegolmRatchet(bytes: (0..<128).map { UInt8($0) }, index: 0)!

    @Test func oneJumpEqualsSingleSteps() throws {
        var stepped = Self.start
        for target in 1...600 as ClosedRange<UInt32> {
            try stepped.advance(to: target)
            if [1, 255, 256, 257, 511, 512, 600].contains(target) {
                var jumped = Self.start
                try jumped.advance(to: target)
                #expect(jumped == stepped, "index \(target)")
            }
        }
    }

    @Test func jumpsComposeAcrossEveryPart() throws {
        var direct = Self.start
        try direct.advance(to: 0x0102_0304)
        var viaStops = Self.start
        for stop: UInt32 in [0x0000_00FF, 0x0000_FF00, 0x0100_0000, 0x0102_0000, 0x0102_0304] {
            try viaStops.advance(to: stop)
        }
        #expect(direct == viaStops)
        #expect(direct.index == 0x0102_0304)
    }

    @Test func neverGoesBack() throws {
        var ratchet = Self.start
        try ratchet.advance(to: 10)
        #expect(throws: CryptoError.self) { try ratchet.advance(to: 9) }
        try ratchet.advance(to: 10)
        #expect(ratchet.index == 10)
    }

    @Test func anOutboundSessionNeverReusesAnIndexAcrossItsState() throws {
        var session = OutboundGroupSession()
        _ = try session.encrypt(Array("one".utf8))
        let kept = session.state
        var restored = try #require(OutboundGroupSession(state: kept))
        #expect(restored.messageIndex == 1)
        #expect(restored.sessionID == session.sessionID)
        let reader = try InboundGroupSession(sessionKey: OutboundGroupSession(state: kept)!.sessionKey)
        #expect(try reader.decrypt(restored.encrypt(Array("two".utf8))).index == 1)
        #expect(OutboundGroupSession(state: .init(ratchet: [1, 2], index: 0, signingKey: kept.signingKey)) == nil)
    }

    @Test func theLastIndexIsTheEnd() throws {
        var state = OutboundGroupSession().state
        state.index = UInt32.max
        var session = try #require(OutboundGroupSession(state: state))
        #expect(throws: CryptoError.exhausted("the Megolm session has used its last index")) {
            try session.encrypt([1])
        }
    }
}
