import FerryCore
import Foundation
import NIOHTTP1

/// What Ferry needs to know of a room to offer it and to send to it.
public struct RoomSummary: Sendable, Equatable {
    public var roomID: String
    public var name: String?
    public var canonicalAlias: String?
    public var encrypted: Bool
    public var joinedMembers: [String]
    /// The other people's display names, for rooms without a name.
    public var memberNames: [String: String]
    public var lastActivity: Int64?
    /// The room's picture (`m.room.avatar`), an `mxc:` URI.
    public var avatar: String?
    /// The members' pictures, by user id: a direct chat or an unnamed room shows the other person's.
    public var memberAvatars: [String: String] = [:]
}

/// A person from the server's user directory.
public struct DirectoryUser: Sendable, Equatable {
    public var userID: String
    public var displayName: String?
    public var avatar: String?
}

/// Rooms, direct chats and people, read from and made on the homeserver.
public struct Rooms: Sendable {
    let http: MatrixHTTP
    public let userID: String

    public init(http: MatrixHTTP, userID: String) {
        self.http = http
        self.userID = userID
    }

    public func joined() async throws(MatrixError) -> [String] {
        struct Answer: Decodable { var joined_rooms: [String] }
        return try await http.call(.GET, "/_matrix/client/v3/joined_rooms", as: Answer.self).joined_rooms
    }

    /// The room's name, alias, encryption and members from its current state, and the time of its
    /// latest event.
    public func summary(of roomID: String) async throws(MatrixError) -> RoomSummary {
        let path = "/_matrix/client/v3/rooms/\(MatrixHTTP.percentEncoded(roomID))"
        let state = try await http.call(.GET, path + "/state", as: [StateEvent].self)
        var summary = RoomSummary(roomID: roomID, encrypted: false, joinedMembers: [], memberNames: [:])
        for event in state {
            switch event.type {
            case "m.room.name": summary.name = event.content.name.flatMap { $0.isEmpty ? nil : $0 }
            case "m.room.canonical_alias": summary.canonicalAlias = event.content.alias
            case "m.room.avatar": summary.avatar = event.content.url.flatMap(MediaURI.init)?.text
            // Any m.room.encryption state makes the room encrypted for good (it cannot be turned off).
            case "m.room.encryption": summary.encrypted = true
            case "m.room.member" where event.content.membership == "join":
                if let member = event.state_key {
                    summary.joinedMembers.append(member)
                    if let name = event.content.displayname { summary.memberNames[member] = name }
                    if let avatar = event.content.avatar_url.flatMap(MediaURI.init) {
                        summary.memberAvatars[member] = avatar.text
                    }
                }
            default: break
            }
        }
        struct Page: Decodable { var chunk: [TimedEvent] }
        struct TimedEvent: Decodable { var origin_server_ts: LenientNumber? }
        if let page = try? await http.call(
            .GET, path + "/messages", query: [("dir", "b"), ("limit", "1")], as: Page.self)
        {
            // Only a plausible time orders the list: negative, fractional or far-future stamps are dropped.
            summary.lastActivity = page.chunk.first?.origin_server_ts?.value.flatMap(Self.microseconds(timestamp:))
        }
        return summary
    }

    /// Whether the room is end-to-end encrypted, read from its state right before sending.
    public func isEncrypted(_ roomID: String) async throws(MatrixError) -> Bool {
        do {
            let _: Content = try await http.call(
                .GET, "/_matrix/client/v3/rooms/\(MatrixHTTP.percentEncoded(roomID))/state/m.room.encryption/")
            return true
        } catch let error where error.status == 404 {
            return false
        }
    }

    /// The room an alias points at (`#room:server` → `!id`).
    public func resolve(alias: String) async throws(MatrixError) -> String {
        struct Answer: Decodable { var room_id: String }
        return try await http.call(
            .GET, "/_matrix/client/v3/directory/room/\(MatrixHTTP.percentEncoded(alias))",
            as: Answer.self
        ).room_id
    }

    /// `m.direct`: the direct chats by the other person's user id.
    public func directChats() async throws(MatrixError) -> [String: [String]] {
        do {
            return try await http.call(.GET, accountDataPath("m.direct"), as: [String: [String]].self)
        } catch let error where error.status == 404 {
            return [:]
        }
    }

    /// A new direct chat with `person`, recorded in `m.direct` so every client shows it as one.
    /// `marker` goes into the room's creation content (`io.github.ferryshare.creation`), so that
    /// the room can be found again should its id be lost (`directChat(createdWith:)`).
    /// `encrypted`: the chat is end-to-end encrypted from its first event, as Element makes them.
    public func createDirectChat(
        with person: String, marker: String? = nil, encrypted: Bool = false
    ) async throws(MatrixError) -> String {
        struct Body: Encodable {
            struct State: Encodable {
                var type = "m.room.encryption"
                var state_key = ""
                var content = ["algorithm": "m.megolm.v1.aes-sha2"]
            }
            var is_direct = true
            var invite: [String]
            var preset = "trusted_private_chat"
            var creation_content: [String: String]?
            var initial_state: [State]?
        }
        struct Answer: Decodable { var room_id: String }
        let body = Body(
            invite: [person], creation_content: marker.map { [Self.creationMarkerKey: $0] },
            initial_state: encrypted ? [Body.State()] : nil)
        let roomID = try await http.call(.POST, "/_matrix/client/v3/createRoom", json: body, as: Answer.self).room_id
        try await recordDirectChat(roomID, with: person)
        return roomID
    }

    /// Adds `roomID` to the person's direct chats in `m.direct`, unless it is there already.
    public func recordDirectChat(_ roomID: String, with person: String) async throws(MatrixError) {
        var direct = try await directChats()
        guard !(direct[person] ?? []).contains(roomID) else { return }
        direct[person, default: []].append(roomID)
        let _: Empty = try await http.call(.PUT, accountDataPath("m.direct"), json: direct)
    }

    static let creationMarkerKey = "io.github.ferryshare.creation"

    /// The joined room created with `marker` in its creation content, if any: after a crash
    /// between createRoom and recording its answer. Reads every joined room's create event, so it
    /// is only asked in that case.
    public func directChat(createdWith marker: String) async throws(MatrixError) -> String? {
        struct Create: Decodable {
            var marker: String?
            enum CodingKeys: String, CodingKey { case marker = "io.github.ferryshare.creation" }
        }
        for roomID in try await joined() {
            let path = "/_matrix/client/v3/rooms/\(MatrixHTTP.percentEncoded(roomID))/state/m.room.create/"
            if let create = try? await http.call(.GET, path, as: Create.self), create.marker == marker { return roomID }
        }
        return nil
    }

    /// People in the server's user directory matching `term`.
    public func searchUsers(_ term: String, limit: Int) async throws(MatrixError) -> [DirectoryUser] {
        struct Body: Encodable { var search_term: String; var limit: Int }
        struct Answer: Decodable {
            struct Result: Decodable { var user_id: String; var display_name: String?; var avatar_url: String? }
            var results: [Result]
        }
        return try await http.call(
            .POST, "/_matrix/client/v3/user_directory/search",
            json: Body(search_term: term, limit: limit), as: Answer.self
        )
        .results.map {
            DirectoryUser(
                userID: $0.user_id, displayName: $0.display_name,
                avatar: $0.avatar_url.flatMap(MediaURI.init)?.text)
        }
    }

    private func accountDataPath(_ type: String) -> String {
        "/_matrix/client/v3/user/\(MatrixHTTP.percentEncoded(userID))/account_data/\(type)"
    }

    struct StateEvent: Decodable {
        var type: String
        var state_key: String?
        var content: Content
    }

    struct Content: Decodable {
        var name: String?
        var alias: String?
        var membership: String?
        var displayname: String?
        var url: String?
        var avatar_url: String?
    }

    /// A server's `origin_server_ts` (milliseconds since 1970) in microseconds, when it is a whole
    /// number within the years 1970 to 9999; anything else is no time at all.
    static func microseconds(timestamp milliseconds: Double) -> Int64? {
        guard milliseconds.isFinite, milliseconds >= 0, milliseconds < 253_402_300_800_000,
            milliseconds.rounded(.towardZero) == milliseconds
        else { return nil }
        return Int64(milliseconds) * 1000
    }
}
