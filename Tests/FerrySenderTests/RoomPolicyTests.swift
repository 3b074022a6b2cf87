import Testing
@testable import FerrySender

/// What the sender believes of a room's encryption: a "no" for a minute, a "yes" for good.
struct RoomPolicyTests {
    @Test func anUnknownRoomIsAskedAbout() {
        #expect(RoomPolicy().isEncrypted("!a", now: 0) == nil)
    }

    @Test func aPlainAnswerIsBelievedForAMinuteOnly() {
        var policy = RoomPolicy()
        policy.record("!a", encrypted: false, now: 1_000)
        #expect(policy.isEncrypted("!a", now: 1_000 + RoomPolicy.plainAnswerLifetime - 1) == false)
        #expect(policy.isEncrypted("!a", now: 1_000 + RoomPolicy.plainAnswerLifetime) == nil)
        #expect(policy.isEncrypted("!b", now: 1_000) == nil)
    }

    @Test func anEncryptedRoomStaysEncryptedWhateverTheServerSaysLater() {
        var policy = RoomPolicy()
        policy.record("!a", encrypted: true, now: 0)
        policy.record("!a", encrypted: false, now: 10)
        #expect(policy.isEncrypted("!a", now: 10) == true)
        #expect(policy.isEncrypted("!a", now: 10 + 100 * RoomPolicy.plainAnswerLifetime) == true)
    }

    @Test func aRoomEncryptedAfterAPlainAnswerIsEncryptedFromThen() {
        var policy = RoomPolicy()
        policy.record("!a", encrypted: false, now: 0)
        policy.record("!a", encrypted: true, now: RoomPolicy.plainAnswerLifetime)
        #expect(policy.isEncrypted("!a", now: RoomPolicy.plainAnswerLifetime) == true)
    }
}
