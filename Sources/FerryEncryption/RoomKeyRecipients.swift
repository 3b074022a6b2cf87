import FerryCrypto

/// Which devices a room's key goes to before the next event, worked out from what is kept of the
/// session and the devices listed now: plain values, no I/O (RoomKeyRecipientsTests).
struct RoomKeyRecipients: Equatable {
    /// Devices without the session's key: new ones, and ones whose identity key changed under the
    /// same device id (a re-keyed device had the key under its old identity only).
    var missing: [DeviceIdentity]
    /// Devices left out by FERRY_ONLY_VERIFIED_DEVICES and not yet told so: each is told
    /// `m.room_key.withheld` once per session, not on every event.
    var untold: [DeviceIdentity]
}

extension RoomRecord {
    /// `verified`: with the setting on, the identity keys of the devices that may have the key.
    func recipients(
        among devices: [String: [String: DeviceIdentity]], verified: Set<String>?
    ) -> RoomKeyRecipients {
        // Sorted, so that the requests made from this are the same for the same state.
        let lacking = devices.keys.sorted().flatMap { user in
            devices[user, default: [:]].values.sorted { $0.deviceID < $1.deviceID }
                .filter { sharedWith[user]?[$0.deviceID] != $0.curve25519 || (resend ?? []).contains($0.curve25519) }
        }
        guard let verified else { return RoomKeyRecipients(missing: lacking, untold: []) }
        let untold = lacking.filter {
            !verified.contains($0.curve25519) && !(withheldFrom[$0.userID] ?? []).contains($0.deviceID)
        }
        return RoomKeyRecipients(missing: lacking.filter { verified.contains($0.curve25519) }, untold: untold)
    }

    /// The devices that received the session's key, by their identity key at the time.
    mutating func shared(with devices: [DeviceIdentity]) {
        for device in devices { sharedWith[device.userID, default: [:]][device.deviceID] = device.curve25519 }
        let given = Set(devices.map(\.curve25519))
        resend = resend?.filter { !given.contains($0) }
        if resend?.isEmpty == true { resend = nil }
    }

    /// The devices told the key is withheld from them.
    mutating func told(_ devices: [DeviceIdentity]) {
        for device in devices where !(withheldFrom[device.userID] ?? []).contains(device.deviceID) {
            withheldFrom[device.userID, default: []].append(device.deviceID)
        }
    }
}
