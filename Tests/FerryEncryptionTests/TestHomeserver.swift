import FerryCore
import FerryCrypto
import FerryMatrix
import Foundation
import Logging
import Synchronization
@testable import FerryEncryption
import FerryAccount
import FerryOutbox

/// A homeserver in process for the encryption's unit tests: the endpoints an encrypted send
/// asks (a filtered sync, a room's encryption, history visibility and members, keys upload,
/// query and claim, to-device), answered from plain values a test sets and changes, as Synapse
/// answers them. Every request is kept, and every to-device message, so that a test reads what
/// Ferry asked and whom it told what. Other users' devices are real Olm accounts: their keys are
/// signed, and Ferry checks them as it checks a server's.
final class TestHomeserver: Sendable {
    struct ToDevice: Sendable {
        var type: String
        /// user → device → content.
        var messages: [String: [String: JSONValue]]
    }

    private struct State {
        var devices: [String: [String: OlmAccount]] = [:]
        /// Devices whose one-time keys are all claimed (and that have no fallback key).
        var exhausted: Set<String> = []
        var claimed: Set<String> = []
        /// Ferry's own device keys as uploaded, by user and device, and its one-time key count.
        var uploaded: [String: [String: JSONValue]] = [:]
        var oneTimeKeys = 0
        /// Ferry's fallback keys as uploaded, oldest first, and whether the last was claimed.
        var fallbackKeys: [String] = []
        var fallbackClaimed = false
        var members: [String: [String: String]] = [:]
        var encryption: [String: JSONValue] = [:]
        var visibility: [String: String] = [:]
        var batch = 0
        var changedUsers: Set<String> = []
        var changedRooms: Set<String> = []
        var requests: [String] = []
        var toDevice: [ToDevice] = []
        /// The account's key backup (version, algorithm, auth_data), and what was put into it
        /// (`room|session|version` → KeyBackupData); PUTs to fail with 502 before one is taken.
        var backup: (version: String, algorithm: String, authData: JSONValue)?
        var backedUp: [String: JSONValue] = [:]
        var failingBackupPuts = 0
        /// Ferry's one-time keys as uploaded (key id → signed key), and to-device messages for
        /// Ferry's device, given with the next sync.
        var ferryOneTimeKeys: [String: JSONValue] = [:]
        var forFerry: [JSONValue] = []
        /// Users' master keys as /keys/query lists them (base64).
        var masterKeys: [String: String] = [:]
        var backupVersionFails = false
        /// Device keys listed in place of what an account would give (a forger's).
        var forged: [String: [String: JSONValue]] = [:]
    }

    private let state = Mutex(State())

    var responder: MatrixHTTP.Responder { { [self] exchange in answer(exchange) } }

    // MARK: What a test sets

    /// An encrypted room with these members joined.
    func makeRoom(_ roomID: String, members: [String], rotationMessages: Int? = nil) {
        state.withLock {
            var content: [String: JSONValue] = ["algorithm": "m.megolm.v1.aes-sha2"]
            if let rotationMessages { content["rotation_period_msgs"] = .int(Int64(rotationMessages)) }
            $0.encryption[roomID] = .object(content)
            $0.members[roomID] = Dictionary(uniqueKeysWithValues: members.map { ($0, "join") })
        }
    }

    /// A membership change, said in the next sync as a change of the room.
    func set(_ user: String, _ membership: String, in roomID: String) {
        state.withLock {
            $0.members[roomID, default: [:]][user] = membership
            $0.changedRooms.insert(roomID)
        }
    }

    /// A new device (or new keys under an old id), said in the next sync's `device_lists`.
    @discardableResult
    func addDevice(_ deviceID: String, of user: String, oneTimeKeys: Int = 5) -> String {
        var account = OlmAccount()
        account.generateOneTimeKeys(oneTimeKeys)
        state.withLock {
            $0.devices[user, default: [:]][deviceID] = account
            $0.exhausted.remove(user + "|" + deviceID)
            $0.changedUsers.insert(user)
        }
        return account.curve25519
    }

    /// The server lists keys of another identity under Ferry's device id (an earlier identity whose
    /// records were lost).
    func listOtherKeys(for deviceID: String, of user: String) {
        let other = OlmAccount().deviceKeys(userID: user, deviceID: deviceID)
        state.withLock { $0.uploaded[user, default: [:]][deviceID] = other }
    }

    /// Someone claimed Ferry's fallback key (its one-time keys were all gone): syncs say so in
    /// `device_unused_fallback_key_types` until a new one is uploaded.
    func claimFerrysFallbackKey() { state.withLock { $0.fallbackClaimed = true } }

    /// The ids of the fallback keys Ferry uploaded, oldest first.
    var fallbackKeysUploaded: [String] { state.withLock { $0.fallbackKeys } }

    /// A device whose one-time keys are all claimed by others: no Olm session can be started.
    func exhaust(_ deviceID: String, of user: String) {
        state.withLock { _ = $0.exhausted.insert(user + "|" + deviceID) }
    }

    /// The account's key backup is now this one (a new version replaces the last).
    func makeBackup(version: String, authData: JSONValue, algorithm: String = KeyBackup.algorithm) {
        state.withLock { $0.backup = (version, algorithm, authData) }
    }

    /// `GET /room_keys/version` answers 502 (or no longer does).
    func failBackupVersion(_ fails: Bool) { state.withLock { $0.backupVersionFails = fails } }

    /// A device of `user` whose listed keys carry `victim`'s identity key under the device's own
    /// Ed25519 signature: what anyone can upload. Its one-time keys are claimable.
    func addDevice(_ deviceID: String, of user: String, copyingIdentityKeyOf victim: OlmAccount) {
        var account = OlmAccount()
        account.generateOneTimeKeys(5)
        let keys: [String: JSONValue] = [
            "user_id": .string(user), "device_id": .string(deviceID),
            "algorithms": ["m.olm.v1.curve25519-aes-sha2", "m.megolm.v1.aes-sha2"],
            "keys": .object([
                "curve25519:\(deviceID)": .string(victim.curve25519), "ed25519:\(deviceID)": .string(account.ed25519),
            ]),
        ]
        let signed = account.signed(keys, userID: user, deviceID: deviceID)
        state.withLock {
            $0.devices[user, default: [:]][deviceID] = account
            $0.forged[user, default: [:]][deviceID] = signed
        }
    }

    /// The master key the server lists for `user` (nil: none).
    func listMasterKey(_ key: String?, of user: String) { state.withLock { $0.masterKeys[user] = key } }

    /// The Olm account of a device `addDevice` made.
    func account(_ deviceID: String, of user: String) -> OlmAccount? {
        state.withLock { $0.devices[user]?[deviceID] }
    }

    /// Takes one of Ferry's uploaded one-time keys (as `/keys/claim` would): its base64 key.
    func claimFerrysOneTimeKey() -> String? {
        state.withLock { state in
            guard let (id, signed) = state.ferryOneTimeKeys.first else { return nil }
            state.ferryOneTimeKeys[id] = nil
            return signed["key"]?.stringValue
        }
    }

    /// A to-device message for Ferry's device, in the next sync.
    func sendToFerry(type: String, sender: String, content: JSONValue) {
        state.withLock { $0.forFerry.append(["type": .string(type), "sender": .string(sender), "content": content]) }
    }

    /// The next `count` room keys put into the backup are answered 502.
    func failBackupPuts(_ count: Int) { state.withLock { $0.failingBackupPuts = count } }

    // MARK: What a test reads

    /// What the backup holds, by `room|session|version`.
    var backedUp: [String: JSONValue] { state.withLock { $0.backedUp } }

    var requests: [String] { state.withLock { $0.requests } }
    var toDevice: [ToDevice] { state.withLock { $0.toDevice } }

    /// The devices (by Curve25519 key) an `m.room.encrypted` to-device message went to.
    var keysSentTo: [String] {
        toDevice.filter { $0.type == "m.room.encrypted" }.flatMap { message in
            message.messages.values.flatMap(\.values).flatMap { $0["ciphertext"]?.objectValue?.keys.map(\.self) ?? [] }
        }
    }

    /// The devices (`user|device`) told that a key is withheld, with the code.
    var withheld: [String] {
        toDevice.filter { $0.type == "m.room_key.withheld" }.flatMap { message in
            message.messages.flatMap { user, devices in
                devices.map { "\(user)|\($0.key)|\($0.value["code"]?.stringValue ?? "")" }
            }
        }
    }

    // MARK: Answering

    private func answer(_ exchange: MatrixHTTP.Exchange) -> (status: Int, body: Data) {
        let prefix = "/_matrix/client/v3/"
        let path = exchange.path.hasPrefix(prefix) ? String(exchange.path.dropFirst(prefix.count)) : exchange.path
        let body = exchange.body.flatMap { try? JSONDecoder().decode(LenientJSON.self, from: $0).value }
        return state.withLock { state in
            state.requests.append("\(exchange.method) \(path)")
            guard exchange.authorized else { return Self.error(401, "M_MISSING_TOKEN") }
            let parts = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
            switch (exchange.method, parts.first ?? "") {
            case ("GET", "sync"): return Self.ok(sync(since: exchange.query["since"], &state))
            case ("GET", "rooms") where parts.count >= 3:
                let room = parts[1].removingPercentEncoding ?? parts[1]
                return roomState(room, Array(parts.dropFirst(2)), state)
            case ("POST", "keys") where parts.count == 2:
                switch parts[1] {
                case "upload": return Self.ok(upload(body, &state))
                case "query": return Self.ok(query(body, state))
                case "claim": return Self.ok(claim(body, &state))
                default: break
                }
            case ("GET", "room_keys") where parts == ["room_keys", "version"]:
                if state.backupVersionFails { return Self.error(502, "M_UNKNOWN") }
                guard let backup = state.backup else { return Self.error(404, "M_NOT_FOUND") }
                return Self.ok([
                    "version": .string(backup.version), "algorithm": .string(backup.algorithm),
                    "auth_data": backup.authData, "count": 0, "etag": "0",
                ])
            case ("PUT", "room_keys") where parts.count == 4 && parts[1] == "keys":
                guard let backup = state.backup, exchange.query["version"] == backup.version else {
                    return Self.error(403, "M_WRONG_ROOM_KEYS_VERSION")
                }
                if state.failingBackupPuts > 0 {
                    state.failingBackupPuts -= 1
                    return Self.error(502, "M_UNKNOWN")
                }
                let (room, session) = (parts[2].removingPercentEncoding ?? "", parts[3].removingPercentEncoding ?? "")
                state.backedUp["\(room)|\(session)|\(backup.version)"] = body
                return Self.ok(["count": 1, "etag": "1"])
            case ("PUT", "sendToDevice") where parts.count == 3:
                let messages = (body?["messages"]?.objectValue ?? [:]).mapValues { $0.objectValue ?? [:] }
                state.toDevice.append(ToDevice(type: parts[1], messages: messages))
                return Self.ok([:])
            default: break
            }
            return Self.error(404, "M_UNRECOGNIZED")
        }
    }

    private func sync(since: String?, _ state: inout State) -> JSONValue {
        state.batch += 1
        var answer: [String: JSONValue] = [
            "next_batch": .string("s\(state.batch)"),
            "device_unused_fallback_key_types": state.fallbackClaimed || state.fallbackKeys.isEmpty
                ? [] : ["signed_curve25519"],
        ]
        defer {
            state.changedUsers = []
            state.changedRooms = []
            state.forFerry = []
        }
        if !state.forFerry.isEmpty { answer["to_device"] = ["events": .array(state.forFerry)] }
        // A first sync gives a token to start from: what changed before it is not said later.
        guard since != nil else { return .object(answer) }
        answer["device_lists"] = ["changed": .array(state.changedUsers.sorted().map(JSONValue.string))]
        var joined: [String: JSONValue] = [:]
        for room in state.changedRooms {
            let events: [JSONValue] = [["type": "m.room.member", "state_key": "", "content": [:]]]
            joined[room] = ["state": ["events": .array(events)], "timeline": ["events": [], "limited": false]]
        }
        answer["rooms"] = ["join": .object(joined)]
        return .object(answer)
    }

    private func roomState(_ room: String, _ rest: [String], _ state: State) -> (status: Int, body: Data) {
        switch rest.joined(separator: "/") {
        case "state/m.room.encryption/":
            guard let content = state.encryption[room] else { return Self.error(404, "M_NOT_FOUND") }
            return Self.ok(content)
        case "state/m.room.history_visibility/":
            guard let visibility = state.visibility[room] else { return Self.error(404, "M_NOT_FOUND") }
            return Self.ok(["history_visibility": .string(visibility)])
        case "members":
            let chunk = (state.members[room] ?? [:]).sorted { $0.key < $1.key }.filter { $0.value != "leave" }.map {
                JSONValue.object(["state_key": .string($0.key), "content": ["membership": .string($0.value)]])
            }
            return Self.ok(["chunk": .array(chunk)])
        default: return Self.error(404, "M_NOT_FOUND")
        }
    }

    private func upload(_ body: JSONValue?, _ state: inout State) -> JSONValue {
        if let keys = body?["device_keys"], let user = keys["user_id"]?.stringValue,
            let device = keys["device_id"]?.stringValue
        {
            state.uploaded[user, default: [:]][device] = keys
        }
        state.oneTimeKeys += body?["one_time_keys"]?.objectValue?.count ?? 0
        state.ferryOneTimeKeys.merge(body?["one_time_keys"]?.objectValue ?? [:]) { _, new in new }
        if let fallback = body?["fallback_keys"]?.objectValue, !fallback.isEmpty {
            state.fallbackKeys += fallback.keys.sorted()
            state.fallbackClaimed = false
        }
        return ["one_time_key_counts": ["signed_curve25519": .int(Int64(state.oneTimeKeys))]]
    }

    private func query(_ body: JSONValue?, _ state: State) -> JSONValue {
        var answer: [String: JSONValue] = [:]
        for user in body?["device_keys"]?.objectValue?.keys ?? [:].keys {
            var devices = state.uploaded[user] ?? [:]
            for (id, account) in state.devices[user] ?? [:] {
                devices[id] = state.forged[user]?[id] ?? account.deviceKeys(userID: user, deviceID: id)
            }
            answer[user] = .object(devices)
        }
        var masters: [String: JSONValue] = [:]
        for (user, key) in state.masterKeys where body?["device_keys"]?[user] != nil {
            masters[user] = [
                "user_id": .string(user), "usage": ["master"], "keys": .object(["ed25519:\(key)": .string(key)]),
            ]
        }
        return ["device_keys": .object(answer), "master_keys": .object(masters)]
    }

    private func claim(_ body: JSONValue?, _ state: inout State) -> JSONValue {
        var answer: [String: JSONValue] = [:]
        for (user, devices) in body?["one_time_keys"]?.objectValue ?? [:] {
            var keys: [String: JSONValue] = [:]
            for deviceID in devices.objectValue?.keys ?? [:].keys {
                guard !state.exhausted.contains(user + "|" + deviceID),
                    let account = state.devices[user]?[deviceID]
                else { continue }
                let unclaimed = account.unpublishedKeys(userID: user, deviceID: deviceID).oneTimeKeys
                    .filter { !state.claimed.contains(user + "|" + deviceID + "|" + $0.key) }
                guard let (id, key) = unclaimed.min(by: { $0.key < $1.key }) else { continue }
                state.claimed.insert(user + "|" + deviceID + "|" + id)
                keys[deviceID] = [id: key]
            }
            answer[user] = .object(keys)
        }
        return ["one_time_keys": .object(answer)]
    }

    private static func ok(_ value: JSONValue) -> (status: Int, body: Data) { (200, Data(CanonicalJSON.encode(value))) }

    private static func error(_ status: Int, _ code: String) -> (status: Int, body: Data) {
        (status, Data(CanonicalJSON.encode(["errcode": .string(code), "error": "test homeserver"])))
    }
}

extension Encryption {
    /// An encryption actor answered by `server`, as the unit tests run it: its seal key in a
    /// private file in `directory`, found there first (the Secret Service is never asked).
    static func underTest(
        server: TestHomeserver, directory: TemporaryFolder, records: InMemoryCryptoRecords = InMemoryCryptoRecords(),
        clock: @escaping @Sendable () -> Int64 = { 1_000_000 }
    ) throws -> Encryption {
        try Data(StateSeal().keyBytes).base64EncodedString().write(
            toFile: directory.path + "/encryption-key", atomically: true, encoding: .utf8)
        let logger = Logger(label: "test")
        return Encryption(
            records: records, vault: .encryptionKey(stateDirectory: directory.path, logger: logger),
            logger: logger, clock: clock, responder: server.responder)
    }
}

extension Session {
    /// The signed-in person of the unit tests: @me:test on device FERRYDEVICE.
    static let underTest = Session(
        userID: "@me:test", homeserver: "http://127.0.0.1:9", deviceID: "FERRYDEVICE", accessToken: "t", signIn: 1)
}
