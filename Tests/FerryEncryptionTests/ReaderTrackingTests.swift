import FerryMatrix
import Testing
@testable import FerryEncryption

/// Which sync answers may change what is known of encrypted rooms' readers. Answers arrive out of
/// order (an event's sync and an emoji verification's long poll are out together, reading a room
/// takes several requests): only an answer to the token tracking is at counts, and a room read
/// from an older token serves its event without being kept.
@Suite struct ReaderTrackingTests {
    static let settings = EncryptedRooms.Settings(
        algorithm: Encryption.megolm, rotationMessages: 100, rotationMilliseconds: 60_000)

    static func room(_ users: [String]) -> KnownRoom {
        KnownRoom(
            settings: settings, readers: EncryptedRooms.Readers(users: users, historyVisibility: "shared"),
            listed: KeySharing.Listed())
    }

    /// Tracking at token `s1`, with `!a` (read by ana and bob) and `!b` (read by cy) known.
    static func tracking() -> Tracking {
        var tracking = Tracking(signIn: "token")
        let taken1 = tracking.take(RoomChanges(next: "s1"), asked: nil)
        #expect(taken1)
        tracking.remember(room(["@ana:x", "@bob:x"]), for: "!a", readFrom: "s1", signedInWith: "token")
        tracking.remember(room(["@cy:x"]), for: "!b", readFrom: "s1", signedInWith: "token")
        return tracking
    }

    @Test func theFirstSyncOnlyGivesATokenToStartFrom() {
        var tracking = Tracking(signIn: "token")
        let taken2 = tracking.take(RoomChanges(next: "s1", users: ["@ana:x"], rooms: ["!a"]), asked: nil)
        #expect(taken2)
        #expect(tracking.since == "s1")
        #expect(tracking.rooms.isEmpty)
    }

    @Test func aRoomReadBeforeAnyTokenIsNotKept() {
        var tracking = Tracking(signIn: "token")
        tracking.remember(Self.room(["@ana:x"]), for: "!a", readFrom: nil, signedInWith: "token")
        #expect(tracking.rooms.isEmpty)
    }

    @Test func aRoomReadUnderAnotherSignInIsNotKept() {
        var tracking = Self.tracking()
        tracking.remember(Self.room(["@dee:x"]), for: "!c", readFrom: "s1", signedInWith: "the previous token")
        #expect(tracking.rooms["!c"] == nil)
    }

    @Test func aRoomWhoseStateChangedIsReadAgainInFull() {
        var tracking = Self.tracking()
        let taken3 = tracking.take(RoomChanges(next: "s2", rooms: ["!a"]), asked: "s1")
        #expect(taken3)
        #expect(tracking.rooms["!a"] == nil)
        #expect(tracking.rooms["!b"] != nil)
        #expect(tracking.since == "s2")
    }

    @Test func aReaderWhoseDevicesChangedHasThemListedAgainInEveryRoomTheyRead() {
        var tracking = Self.tracking()
        let taken4 = tracking.take(RoomChanges(next: "s2", users: ["@bob:x", "@dee:x"]), asked: "s1")
        #expect(taken4)
        #expect(tracking.rooms["!a"]?.devicesChanged == true)
        #expect(tracking.rooms["!b"]?.devicesChanged == false)
    }

    @Test func anAnswerToAnOlderTokenChangesNothing() {
        var tracking = Self.tracking()
        let taken5 = tracking.take(RoomChanges(next: "s2"), asked: "s1")
        #expect(taken5)
        // The long poll asked from s1 too, and answers after the event's sync moved on to s2.
        let taken6 = tracking.take(RoomChanges(next: "s2-late", users: ["@cy:x"], rooms: ["!a"]), asked: "s1")
        #expect(!taken6)
        #expect(tracking.since == "s2")
        #expect(tracking.rooms["!a"] != nil)
        #expect(tracking.rooms["!b"]?.devicesChanged == false)
    }

    @Test func readersReadWhileASyncSaidTheyChangedAreNotWrittenBack() {
        var tracking = Self.tracking()
        // Bob's devices are being listed again from s1 when a sync says the room itself changed.
        var relisted = Self.room(["@ana:x", "@bob:x"])
        let taken7 = tracking.take(RoomChanges(next: "s2", rooms: ["!a"]), asked: "s1")
        #expect(taken7)
        tracking.remember(relisted, for: "!a", readFrom: "s1", signedInWith: "token")
        #expect(tracking.rooms["!a"] == nil)
        // Listed from the token it is at, the answer is kept.
        relisted.devicesChanged = false
        tracking.remember(relisted, for: "!a", readFrom: "s2", signedInWith: "token")
        #expect(tracking.rooms["!a"] != nil)
    }

    @Test func aDeviceChangeThatArrivesDuringARelistingIsNotLost() {
        var tracking = Self.tracking()
        let taken8 = tracking.take(RoomChanges(next: "s2", users: ["@bob:x"]), asked: "s1")
        #expect(taken8)
        var relisted = tracking.rooms["!a"]!
        relisted.devicesChanged = false
        // Bob adds another device while his list is being read: the answer may predate it.
        let taken9 = tracking.take(RoomChanges(next: "s3", users: ["@bob:x"]), asked: "s2")
        #expect(taken9)
        tracking.remember(relisted, for: "!a", readFrom: "s2", signedInWith: "token")
        #expect(tracking.rooms["!a"]?.devicesChanged == true)
    }
}
