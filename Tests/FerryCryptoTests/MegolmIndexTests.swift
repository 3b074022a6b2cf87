import Testing
@testable import FerryCrypto

/// The index of a message Ferry sent, read back from the room (a restored copy of Ferry's state
/// must not send under an index it already used): only the session's own signature vouches for it.
struct MegolmIndexTests {
    @Test func eachMessageSaysItsIndex() throws {
        var session = OutboundGroupSession()
        let first = try session.encrypt(Array("one".utf8))
        let second = try session.encrypt(Array("two".utf8))
        #expect(MegolmMessage.index(ofCiphertext: first, sessionID: session.sessionID) == 0)
        #expect(MegolmMessage.index(ofCiphertext: second, sessionID: session.sessionID) == 1)
    }

    @Test func aMessageOfAnotherSessionOrAlteredSaysNothing() throws {
        var session = OutboundGroupSession()
        let other = OutboundGroupSession()
        let message = try session.encrypt(Array("one".utf8))
        #expect(MegolmMessage.index(ofCiphertext: message, sessionID: other.sessionID) == nil)
        // The index byte changed (field 1's varint, right after the version): the signature no longer holds.
        var bytes = try #require(UnpaddedBase64.decode(message))
        bytes[2] = 7
        #expect(MegolmMessage.index(ofCiphertext: UnpaddedBase64.encode(bytes), sessionID: session.sessionID) == nil)
        #expect(MegolmMessage.index(ofCiphertext: "not base64!", sessionID: session.sessionID) == nil)
    }
}
