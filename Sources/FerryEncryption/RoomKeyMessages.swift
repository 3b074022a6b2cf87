import FerryCore
import FerryCrypto

/// The Olm side of handing out a room key, without I/O: the sessions started from a
/// `/keys/claim` answer, and the to-device requests that carry the key with the session states
/// to keep before each is sent (RoomKeyMessagesTests). KeySharing.share does the asking and
/// sending around them.
extension KeySharing {
    /// Olm sessions (by the device's identity key) started with `devices` from a claim answer:
    /// only from a one-time or fallback key the device itself signed. A device the answer holds
    /// no such key for gets none, and is told `m.no_olm`: a key the server made up would give it
    /// the session.
    static func sessions(
        from claimed: JSONValue, for devices: some Sequence<DeviceIdentity>, account: OlmAccount
    ) -> [String: OlmSession] {
        var sessions: [String: OlmSession] = [:]
        for device in devices {
            guard let keys = claimed[device.userID]?[device.deviceID]?.objectValue,
                let signed = keys.first(where: { $0.key.hasPrefix("signed_curve25519:") })?.value,
                let key = try? device.verifiedOneTimeKey(signed),
                let session = try? OlmSession.outbound(
                    from: account, theirIdentityKey: device.curve25519, theirOneTimeKey: key)
            else { continue }
            sessions[device.curve25519] = session
        }
        return sessions
    }

    /// One to-device request carrying a room key.
    struct Batch {
        /// user → device id → `m.room.encrypted` content.
        var messages: [String: [String: JSONValue]] = [:]
        /// The sessions' new states, kept before the request goes.
        var changes: [CryptoStore.Change] = []
        var devices: [DeviceIdentity] = []
    }

    /// `roomKey` encrypted for each of `devices` (each must have a session in `sessions`, which
    /// steps), in requests of at most `size` devices: one request for thousands of devices is
    /// one the server refuses.
    static func batches(
        _ roomKey: JSONValue, type: String = "m.room_key", to devices: [DeviceIdentity],
        sessions: inout [String: OlmSession],
        sender: EncryptedEvents.Sender, size: Int = batch
    ) throws(EncryptionFailure) -> [Batch] {
        var batches: [Batch] = []
        for start in stride(from: 0, to: devices.count, by: size) {
            var request = Batch()
            for device in devices[start..<min(start + size, devices.count)] {
                guard var session = sessions[device.curve25519] else { continue }
                do {
                    request.messages[device.userID, default: [:]][device.deviceID] = try EncryptedEvents.toDevice(
                        type: type, content: roomKey, from: sender, to: device, session: &session)
                } catch {
                    throw .crypto("\(error)")
                }
                sessions[device.curve25519] = session
                request.changes.append(CryptoStore.set("olm:\(device.curve25519)", session.state))
                request.devices.append(device)
            }
            batches.append(request)
        }
        return batches
    }
}
