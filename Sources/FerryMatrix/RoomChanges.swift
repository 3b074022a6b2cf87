import FerryCore
import Foundation

/// What changed since a sync token, as far as who reads an encrypted room is concerned: users
/// whose devices changed (`device_lists`), and rooms whose members, history visibility or
/// encryption changed. A `/sync` with a filter that leaves everything else out: asked at once
/// (`wait` 0), or held open by the server until something changes (a long poll).
public struct RoomChanges: Sendable {
    /// The token to ask from next time.
    public var next: String
    /// Users whose device lists changed (or who left every room shared with this user).
    public var users: Set<String>
    /// Rooms with a membership, visibility or encryption change, or a gap in what the server told
    /// (`limited`), or that this user joined or left since: their readers must be read again.
    public var rooms: Set<String>
    /// The to-device messages the answer carried (the server drops them once a later sync
    /// asks from `next`: whoever takes this answer must hand them on, or they are gone).
    public var toDevice: [ToDeviceEvent] = []
    /// The fallback key algorithms the server still holds unused for this device
    /// (`device_unused_fallback_key_types`); nil when the answer does not say.
    public var unusedFallbackKeyTypes: [String]?

    public init(next: String, users: Set<String> = [], rooms: Set<String> = [], toDevice: [ToDeviceEvent] = []) {
        self.next = next
        self.users = users
        self.rooms = rooms
        self.toDevice = toDevice
    }

    static let watched: [JSONValue] = ["m.room.member", "m.room.history_visibility", "m.room.encryption"]

    /// Changes since `since`, in every room; with no token, only a token to start from (no room's
    /// state, however many rooms there are). `wait`: how long the server may hold the answer
    /// while nothing changes, in milliseconds.
    public static func since(_ since: String?, wait: Int = 0, http: MatrixHTTP) async throws(MatrixError) -> RoomChanges
    {
        var room: [String: JSONValue] = [
            "account_data": ["not_types": ["*"]],
            "ephemeral": ["not_types": ["*"]],
            "state": ["types": .array(watched)],
            "timeline": ["types": .array(watched), "limit": 20],
        ]
        if since == nil { room["rooms"] = [] }
        let filter: JSONValue = [
            "presence": ["not_types": ["*"]],
            "account_data": ["not_types": ["*"]],
            "room": .object(room),
        ]
        var query = [
            ("timeout", String(max(0, wait))), ("set_presence", "offline"),
            ("filter", String(decoding: CanonicalJSON.encode(filter), as: UTF8.self)),
        ]
        if let since { query.append(("since", since)) }
        let answer = try await http.call(
            .GET, "/_matrix/client/v3/sync", query: query,
            timeout: .milliseconds(Int64(max(0, wait)) + 30_000), as: LenientJSON.self
        ).value
        guard let next = answer["next_batch"]?.stringValue, !next.isEmpty else {
            throw MatrixError(kind: .malformed, message: "a sync without next_batch")
        }
        var changes = RoomChanges(next: next, users: [], rooms: [])
        for key in ["changed", "left"] {
            if case .array(let users)? = answer["device_lists"]?[key] {
                changes.users.formUnion(users.compactMap(\.stringValue))
            }
        }
        for section in ["join", "leave", "invite"] {
            for (room, content) in answer["rooms"]?[section]?.objectValue ?? [:] {
                let state = content["state"]?["events"], timeline = content["timeline"]?["events"]
                if content["timeline"]?["limited"] == .bool(true) || section != "join"
                    || !(state.flatMap(\.arrayValue) ?? []).isEmpty || !(timeline.flatMap(\.arrayValue) ?? []).isEmpty
                {
                    changes.rooms.insert(room)
                }
            }
        }
        changes.toDevice = ToDeviceEvent.list(answer["to_device"]?["events"])
        if case .array(let types)? = answer["device_unused_fallback_key_types"] {
            changes.unusedFallbackKeyTypes = types.compactMap(\.stringValue)
        }
        return changes
    }
}

/// One to-device message: who sent it, its type and its content. Anyone on any server can send
/// one to any device, so nothing in it is trusted for being here.
public struct ToDeviceEvent: Sendable, Hashable {
    /// The sending user (the server vouches for this; the sending device is the content's word).
    public var sender: String
    /// The event type.
    public var type: String
    /// The content.
    public var content: JSONValue

    /// A to-device message.
    public init(sender: String, type: String, content: JSONValue) {
        self.sender = sender
        self.type = type
        self.content = content
    }

    /// The well-formed events of a sync's `to_device.events`, at most 200 (Synapse sends 100 at
    /// most; a server sending more is not to be read without end).
    static func list(_ events: JSONValue?) -> [ToDeviceEvent] {
        (events?.arrayValue ?? []).prefix(200).compactMap { event in
            guard let sender = event["sender"]?.stringValue, let type = event["type"]?.stringValue,
                let content = event["content"], content.objectValue != nil
            else { return nil }
            return ToDeviceEvent(sender: sender, type: type, content: content)
        }
    }
}
