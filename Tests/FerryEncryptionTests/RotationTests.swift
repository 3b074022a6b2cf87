import FerryCore
import FerryCrypto
import FerryMatrix
import Testing
@testable import FerryEncryption

/// When a room's outbound session is replaced: used up, or someone who had its key may no
/// longer read. Devices are real identities (signed keys from FerryCrypto accounts), values only.
@Suite struct RotationTests {
    static let settings = EncryptedRooms.Settings(
        algorithm: Encryption.megolm, rotationMessages: 3, rotationMilliseconds: 60_000)

    static func device(_ user: String, _ id: String, account: OlmAccount = OlmAccount()) -> DeviceIdentity {
        try! DeviceIdentity(verifying: account.deviceKeys(userID: user, deviceID: id), userID: user, deviceID: id)
    }

    static func room(sharedWith devices: [DeviceIdentity], messages: Int = 0, created: Int64 = 0) -> RoomRecord {
        var shared: [String: [String: String]] = [:]
        for device in devices { shared[device.userID, default: [:]][device.deviceID] = device.curve25519 }
        return RoomRecord(
            session: OutboundGroupSession().state, created: created, messages: messages, sharedWith: shared)
    }

    static func listed(_ devices: [DeviceIdentity]) -> [String: [String: DeviceIdentity]] {
        var byUser: [String: [String: DeviceIdentity]] = [:]
        for device in devices { byUser[device.userID, default: [:]][device.deviceID] = device }
        return byUser
    }

    static func readers(_ users: [String], visibility: String = "shared") -> EncryptedRooms.Readers {
        EncryptedRooms.Readers(users: users, historyVisibility: visibility)
    }

    let ana = Self.device("@ana:x", "A1")
    let bob = Self.device("@bob:x", "B1")

    @Test func aSessionInUseWithTheSameReadersIsKept() {
        let room = Self.room(sharedWith: [ana, bob], messages: 2, created: 1_000)
        #expect(
            Encryption.rotation(
                room, settings: Self.settings, readers: Self.readers(["@ana:x", "@bob:x"]),
                devices: Self.listed([ana, bob]), now: 1_000 + 59_999_000) == nil)
    }

    @Test func aNewDeviceIsGivenTheKeyWithoutANewSession() {
        let room = Self.room(sharedWith: [ana])
        let tablet = Self.device("@ana:x", "A2")
        #expect(
            Encryption.rotation(
                room, settings: Self.settings, readers: Self.readers(["@ana:x"]), devices: Self.listed([ana, tablet]),
                now: 0) == nil)
    }

    @Test func theRoomsMessageCountEndsASession() {
        let room = Self.room(sharedWith: [ana], messages: 3)
        #expect(
            Encryption.rotation(
                room, settings: Self.settings, readers: Self.readers(["@ana:x"]), devices: Self.listed([ana]), now: 0)
                != nil)
    }

    @Test func theRoomsPeriodEndsASession() {
        let room = Self.room(sharedWith: [ana], created: 5)
        #expect(
            Encryption.rotation(
                room, settings: Self.settings, readers: Self.readers(["@ana:x"]), devices: Self.listed([ana]),
                now: 5 + 60_000_000) != nil)
    }

    @Test func aMemberWhoLeftEndsASession() {
        let room = Self.room(sharedWith: [ana, bob])
        #expect(
            Encryption.rotation(
                room, settings: Self.settings, readers: Self.readers(["@ana:x"]), devices: Self.listed([ana]), now: 0)
                == "a member left")
    }

    @Test func aDeviceGoneOrWithNewKeysEndsASession() {
        let room = Self.room(sharedWith: [ana, bob])
        #expect(
            Encryption.rotation(
                room, settings: Self.settings, readers: Self.readers(["@ana:x", "@bob:x"]),
                devices: Self.listed([ana, Self.device("@bob:x", "B2")]), now: 0) == "a device is gone")
        let bobAgain = Self.device("@bob:x", "B1")
        #expect(
            Encryption.rotation(
                room, settings: Self.settings, readers: Self.readers(["@ana:x", "@bob:x"]),
                devices: Self.listed([ana, bobAgain]), now: 0) == "a device is gone")
    }

    @Test func aUserTheServerDidNotListCountsAsUnchanged() {
        // A remote server that did not answer the key query lists no devices for its user: that
        // is no reason to think Bob's device gone (and to rotate on every message).
        let room = Self.room(sharedWith: [ana, bob])
        #expect(
            Encryption.rotation(
                room, settings: Self.settings, readers: Self.readers(["@ana:x", "@bob:x"]),
                devices: Self.listed([ana]).filter { $0.key != "@bob:x" },
                now: 0) == nil)
        // Listed with no devices at all, Bob's device is gone.
        var devices = Self.listed([ana])
        devices["@bob:x"] = [:]
        #expect(
            Encryption.rotation(
                room, settings: Self.settings, readers: Self.readers(["@ana:x", "@bob:x"]), devices: devices, now: 0)
                == "a device is gone")
    }

    @Test func aChangedHistoryVisibilityOrAClockSetBackEndsASession() {
        var room = Self.room(sharedWith: [ana], created: 1_000)
        room.sharedHistory = true
        #expect(
            Encryption.rotation(
                room, settings: Self.settings, readers: Self.readers(["@ana:x"]), devices: Self.listed([ana]),
                now: 2_000) == nil)
        #expect(
            Encryption.rotation(
                room, settings: Self.settings, readers: Self.readers(["@ana:x"], visibility: "joined"),
                devices: Self.listed([ana]), now: 2_000) == "the history visibility changed")
        #expect(
            Encryption.rotation(
                room, settings: Self.settings, readers: Self.readers(["@ana:x"]), devices: Self.listed([ana]),
                now: 999) == "its age")
    }

    @Test func aDeviceNoLongerVerifiedEndsASessionWhenOnlyVerifiedDevicesGetKeys() {
        let room = Self.room(sharedWith: [ana, bob])
        #expect(
            Encryption.rotation(
                room, settings: Self.settings, readers: Self.readers(["@ana:x", "@bob:x"]),
                devices: Self.listed([ana, bob]), verified: [ana.curve25519, bob.curve25519], now: 0) == nil)
        #expect(
            Encryption.rotation(
                room, settings: Self.settings, readers: Self.readers(["@ana:x", "@bob:x"]),
                devices: Self.listed([ana, bob]), verified: [ana.curve25519], now: 0)
                == "a device is no longer verified")
        // The setting off: verification plays no part.
        #expect(
            Encryption.rotation(
                room, settings: Self.settings, readers: Self.readers(["@ana:x", "@bob:x"]),
                devices: Self.listed([ana, bob]), verified: nil, now: 0) == nil)
    }

    @Test func aHostileRoomsNumbersAreBroughtIntoRange() {
        let never = EncryptedRooms.Settings(content: [
            "algorithm": "m.megolm.v1.aes-sha2", "rotation_period_msgs": 0,
            "rotation_period_ms": -5,
        ])
        #expect(never.rotationMessages == 1 && never.rotationMilliseconds == 3_600_000)
        let forever = EncryptedRooms.Settings(content: [
            "algorithm": "m.megolm.v1.aes-sha2", "rotation_period_msgs": .int(Int64.max),
            "rotation_period_ms": .int(Int64.max),
        ])
        #expect(forever.rotationMessages == 1_000 && forever.rotationMilliseconds == 6_048_000_000)
        let plain = EncryptedRooms.Settings(content: ["algorithm": "m.megolm.v1.aes-sha2"])
        #expect(plain.rotationMessages == 100 && plain.rotationMilliseconds == 604_800_000)
    }
}
