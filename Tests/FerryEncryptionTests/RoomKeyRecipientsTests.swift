import FerryCrypto
import FerryMatrix
import Testing
@testable import FerryEncryption

/// Who gets a room's key before the next event, from plain values: the kept session's record and
/// the devices listed now (real identities, signed by FerryCrypto accounts).
@Suite struct RoomKeyRecipientsTests {
    let ana = RotationTests.device("@ana:x", "A1")
    let ana2 = RotationTests.device("@ana:x", "A2")
    let bob = RotationTests.device("@bob:x", "B1")

    @Test func aNewSessionGoesToEveryDeviceInOrder() {
        let room = RotationTests.room(sharedWith: [])
        let recipients = room.recipients(among: RotationTests.listed([bob, ana2, ana]), verified: nil)
        #expect(recipients == RoomKeyRecipients(missing: [ana, ana2, bob], untold: []))
    }

    @Test func onlyDevicesWithoutTheKeyGetIt() {
        let room = RotationTests.room(sharedWith: [ana, bob])
        #expect(room.recipients(among: RotationTests.listed([ana, bob]), verified: nil).missing.isEmpty)
        #expect(room.recipients(among: RotationTests.listed([ana, ana2, bob]), verified: nil).missing == [ana2])
    }

    @Test func aDeviceReKeyedUnderTheSameIDGetsTheKeyAgain() {
        let room = RotationTests.room(sharedWith: [ana, bob])
        let rekeyed = RotationTests.device("@bob:x", "B1")
        #expect(rekeyed.curve25519 != bob.curve25519)
        #expect(room.recipients(among: RotationTests.listed([ana, rekeyed]), verified: nil).missing == [rekeyed])
    }

    @Test func withOnlyVerifiedDevicesTheOthersAreToldOncePerSession() {
        var room = RotationTests.room(sharedWith: [])
        let verified: Set = [ana.curve25519]
        let first = room.recipients(among: RotationTests.listed([ana, ana2, bob]), verified: verified)
        #expect(first == RoomKeyRecipients(missing: [ana], untold: [ana2, bob]))
        room.shared(with: first.missing)
        room.told(first.untold)
        let next = room.recipients(among: RotationTests.listed([ana, ana2, bob]), verified: verified)
        #expect(next == RoomKeyRecipients(missing: [], untold: []))
        // Told twice (a share's outcome and the setting both withhold): listed once.
        room.told([bob])
        #expect(room.withheldFrom["@bob:x"] == ["B1"])
    }

    @Test func aDeviceVerifiedLaterGetsTheKeyItWasToldItWouldNot() {
        var room = RotationTests.room(sharedWith: [ana])
        room.told([bob])
        let recipients = room.recipients(
            among: RotationTests.listed([ana, bob]), verified: [ana.curve25519, bob.curve25519])
        #expect(recipients == RoomKeyRecipients(missing: [bob], untold: []))
    }
}
