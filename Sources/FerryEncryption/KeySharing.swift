import FerryCore
import FerryCrypto
import FerryMatrix
import Foundation
import Logging

/// Handing a room key to devices: each reached by an Olm session (kept, or started from a
/// one-time key it signed), all in one to-device request; a device that cannot be reached is told
/// `m.room_key.withheld` (`m.no_olm`) once, so its person sees why, not a silent gap.
struct KeySharing {
    let store: CryptoStore
    let sender: EncryptedEvents.Sender
    let api: DeviceKeysAPI
    let logger: Logger

    /// Readers' devices as the server lists them, each checked.
    struct Listed {
        /// user → device id → identity: devices whose keys carry their own signature, without
        /// Ferry's own. A device whose keys do not verify is left out, and logged: a server
        /// cannot slip a key of its own making into the room.
        var devices: [String: [String: DeviceIdentity]] = [:]
        /// The Curve25519 keys of devices their owners verified (cross-signed).
        var verifiedByOwner: Set<String> = []
        /// Each user's master key, as the server lists it (user → base64 key).
        var masterKeys: [String: String] = [:]
    }

    /// The devices of `users`, by `/keys/query`.
    static func devices(
        of users: [String], except me: Session, api: DeviceKeysAPI,
        logger: Logger
    ) async throws(EncryptionFailure) -> Listed {
        guard !users.isEmpty else { return Listed() }
        let answer: JSONValue
        do { answer = try await api.queryAnswer(users: users) } catch { throw .server(error) }
        return Listed(answer, of: users, exceptUser: me.userID, device: me.deviceID, logger: logger)
    }
}

extension KeySharing.Listed {
    /// `user`'s listed device with this identity key.
    func device(of user: String, curve25519: String) -> DeviceIdentity? {
        devices[user]?.values.first { $0.curve25519 == curve25519 }
    }

    /// The devices of `users` in a `/keys/query` answer, each checked, without the one device
    /// `exceptUser`'s `device` (Ferry's own). Plain values, no I/O (DeviceListingTests).
    init(_ answer: JSONValue, of users: [String], exceptUser: String, device: String, logger: Logger) {
        var listed = Self()
        let wanted = Set(users)
        for (user, devices) in answer["device_keys"]?.objectValue ?? [:] where wanted.contains(user) {
            var byID: [String: DeviceIdentity] = [:]
            for (deviceID, keys) in devices.objectValue ?? [:] {
                if user == exceptUser && deviceID == device { continue }
                do {
                    let device = try DeviceIdentity(verifying: keys, userID: user, deviceID: deviceID)
                    byID[deviceID] = device
                    if CrossSigning.isVerifiedByOwner(
                        keys, of: device, masterKey: answer["master_keys"]?[user],
                        selfSigningKey: answer["self_signing_keys"]?[user])
                    {
                        listed.verifiedByOwner.insert(device.curve25519)
                    }
                } catch {
                    logger.warning(
                        "left out a device whose keys do not verify",
                        metadata: ["user": "\(user)", "device": "\(deviceID)"])
                }
            }
            listed.devices[user] = byID
            listed.masterKeys[user] = CrossSigning.masterKey(answer["master_keys"]?[user], userID: user)
        }
        // An identity key is one device's: listed twice (someone's device copying another's key
        // under its own signature), both are left out, or the two would share one Olm session,
        // the same chain step read by both.
        var seen: [String: Int] = [:]
        for byID in listed.devices.values { for device in byID.values { seen[device.curve25519, default: 0] += 1 } }
        let repeated = Set(seen.filter { $0.value > 1 }.keys)
        if !repeated.isEmpty {
            logger.warning("left out devices that share an identity key", metadata: ["keys": "\(repeated.count)"])
            for (user, byID) in listed.devices {
                listed.devices[user] = byID.filter { !repeated.contains($0.value.curve25519) }
            }
            listed.verifiedByOwner.subtract(repeated)
        }
        self = listed
    }
}

extension KeySharing {
    struct Outcome {
        var received: [DeviceIdentity] = []
        var withheld: [DeviceIdentity] = []
    }

    /// Sends `roomKey` (an `m.room_key`, or an `m.forwarded_room_key` as `type`) to `devices`.
    /// Olm sessions are kept (their chains stepped) before the request; the key counts as
    /// received once the server took the request.
    func share(
        _ roomKey: JSONValue, type: String = "m.room_key", with devices: [DeviceIdentity],
        withheld alreadyTold: [String: [String]], roomID: String, sessionID: String
    ) async throws(EncryptionFailure) -> Outcome {
        var sessions: [String: OlmSession] = [:]
        var needSession: [DeviceIdentity] = []
        for device in devices {
            if let owner = try store.load("olm-owner:\(device.curve25519)", as: String.self), owner != device.userID {
                // Another user's session under this identity key (a device listing a key copied
                // from someone else's): never used for, nor replaced by, this one. Unreachable.
                logger.warning(
                    "a device lists an identity key Ferry holds a session for with another user; left out",
                    metadata: ["user": "\(device.userID)", "device": "\(device.deviceID)"])
                continue
            }
            guard let state = try store.load("olm:\(device.curve25519)", as: OlmSession.State.self) else {
                needSession.append(device)
                continue
            }
            do {
                sessions[device.curve25519] = try OlmSession(state: state)
            } catch {
                // A kept session that no longer decodes is replaced by a new one (the device reads
                // either): said, so that a store going bad shows before every session is new.
                logger.warning(
                    "a kept Olm session does not decode; starting a new one",
                    metadata: ["user": "\(device.userID)", "device": "\(device.deviceID)", "error": "\(error)"])
                needSession.append(device)
            }
        }
        for start in stride(from: 0, to: needSession.count, by: Self.batch) {
            let batch = needSession[start..<min(start + Self.batch, needSession.count)]
            let claimed: JSONValue
            do {
                claimed = try await api.claim(
                    Dictionary(grouping: batch, by: \.userID).mapValues { $0.map(\.deviceID) })
            } catch {
                throw .server(error)
            }
            sessions.merge(Self.sessions(from: claimed, for: batch, account: sender.account)) { kept, _ in kept }
        }
        // Whose each new session is: a message naming its key may not make Ferry replace it for
        // someone else (ToDeviceInbox).
        let started = Dictionary(
            needSession.filter { sessions[$0.curve25519] != nil }.map { ($0.curve25519, $0.userID) },
            uniquingKeysWith: { first, _ in first })
        var outcome = Outcome()
        let reachable = devices.filter { sessions[$0.curve25519] != nil }
        outcome.withheld = devices.filter {
            sessions[$0.curve25519] == nil && !(alreadyTold[$0.userID] ?? []).contains($0.deviceID)
        }
        for batch in try Self.batches(roomKey, type: type, to: reachable, sessions: &sessions, sender: sender) {
            // Each chain step kept before the request that carries it.
            try store.write(
                batch.changes
                    + batch.devices.compactMap { device in
                        started[device.curve25519].map { CryptoStore.set("olm-owner:\(device.curve25519)", $0) }
                    })
            do {
                try await api.sendToDevice(
                    type: "m.room.encrypted", transactionID: Self.transactionID(), messages: batch.messages)
            } catch {
                throw .server(error)
            }
            outcome.received.append(contentsOf: batch.devices)
        }
        try await withhold(.noOlm, from: outcome.withheld, roomID: roomID, sessionID: sessionID)
        return outcome
    }

    /// Why a room key is withheld, as `m.room_key.withheld` says it.
    enum Withheld: String {
        case noOlm = "m.no_olm"
        case unverified = "m.unverified"

        var reason: String {
            switch self {
            case .noOlm: return "Unable to establish a secure channel."
            case .unverified: return "The sender has disabled encrypting to unverified devices."
            }
        }
    }

    /// Tells `devices` that the room's key is withheld from them, and why (not encrypted: the
    /// notice holds no secret, and a device without an Olm session could not read it).
    func withhold(
        _ code: Withheld, from devices: [DeviceIdentity], roomID: String, sessionID: String
    ) async throws(EncryptionFailure) {
        guard !devices.isEmpty else { return }
        let notice: JSONValue = [
            "algorithm": "m.megolm.v1.aes-sha2", "room_id": .string(roomID), "session_id": .string(sessionID),
            "sender_key": .string(sender.account.curve25519), "from_device": .string(sender.deviceID),
            "code": .string(code.rawValue), "reason": .string(code.reason),
        ]
        for start in stride(from: 0, to: devices.count, by: Self.batch) {
            var notices: [String: [String: JSONValue]] = [:]
            for device in devices[start..<min(start + Self.batch, devices.count)] {
                notices[device.userID, default: [:]][device.deviceID] = notice
            }
            do {
                try await api.sendToDevice(
                    type: "m.room_key.withheld", transactionID: Self.transactionID(), messages: notices)
            } catch {
                throw .server(error)
            }
        }
        logger.notice("room key withheld", metadata: ["code": "\(code.rawValue)", "devices": "\(devices.count)"])
    }

    /// Devices per to-device request.
    static let batch = 250

    /// A new to-device transaction id: each request carries new ciphertexts, so it is never a repeat.
    static func transactionID() -> String { "ferry-key-" + UUID().uuidString.lowercased() }
}
