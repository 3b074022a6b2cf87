import FerryCore
import Foundation

/// What sending into an encrypted room needs to know of it: the room's encryption settings and
/// who may read it. (Its events go out through `RoomEvents.send(_:type:to:transactionID:)`.)
public struct EncryptedRooms: Sendable {
    let http: MatrixHTTP

    public init(http: MatrixHTTP) { self.http = http }

    /// The room's `m.room.encryption` as Ferry follows it; nil when the room is not encrypted.
    public struct Settings: Sendable, Equatable {
        /// The algorithm the room asks for; Ferry speaks only `m.megolm.v1.aes-sha2`.
        public var algorithm: String
        /// A new outbound session after this many messages.
        public var rotationMessages: Int
        /// A new outbound session after this long, in milliseconds.
        public var rotationMilliseconds: Int64

        /// The spec's defaults: 100 messages, one week.
        public static let defaultMessages = 100
        public static let defaultMilliseconds: Int64 = 604_800_000

        /// Read from the state event's content, the numbers brought into range (see `settings(of:)`).
        public init(content: JSONValue) {
            self.init(algorithm: content["algorithm"]?.stringValue ?? "")
            if let messages = content["rotation_period_msgs"]?.intValue {
                rotationMessages = Int(min(max(messages, 1), Int64(Self.defaultMessages * 10)))
            }
            if let milliseconds = content["rotation_period_ms"]?.intValue {
                rotationMilliseconds = min(max(milliseconds, 3_600_000), Self.defaultMilliseconds * 10)
            }
        }

        public init(
            algorithm: String, rotationMessages: Int = Self.defaultMessages,
            rotationMilliseconds: Int64 = Self.defaultMilliseconds
        ) {
            self.algorithm = algorithm
            self.rotationMessages = rotationMessages
            self.rotationMilliseconds = rotationMilliseconds
        }
    }

    /// Who receives a room's keys, read from its current state.
    public struct Readers: Sendable, Equatable {
        /// Joined members, and invited ones when the history visibility lets them read.
        public var users: [String]
        /// `m.room.history_visibility` (`shared` when unset): whether a key may be shared on to
        /// members who join later.
        public var historyVisibility: String

        public init(users: [String], historyVisibility: String) {
            self.users = users
            self.historyVisibility = historyVisibility
        }

        /// Whether `m.room_key` carries `shared_history`: the history is visible beyond the
        /// members of the moment (MSC3061).
        public var sharedHistory: Bool { historyVisibility == "shared" || historyVisibility == "world_readable" }
    }

    /// The room's encryption settings; nil when it has none. A server's odd numbers are brought
    /// into a sane range: at least one message and one hour per session, at most the defaults'
    /// tenfold, so a hostile room can neither rotate on every message forever nor keep a key for years.
    public func settings(of roomID: String) async throws(MatrixError) -> Settings? {
        let path = "/_matrix/client/v3/rooms/\(MatrixHTTP.percentEncoded(roomID))/state/m.room.encryption/"
        let content: JSONValue
        do {
            content = try await http.call(.GET, path, as: LenientJSON.self).value
        } catch let error where error.status == 404 {
            return nil
        }
        return Settings(content: content)
    }

    /// The users whose devices get the room's key: joined members, and invited ones unless the
    /// history is visible only from joining.
    public func readers(of roomID: String) async throws(MatrixError) -> Readers {
        let room = "/_matrix/client/v3/rooms/\(MatrixHTTP.percentEncoded(roomID))"
        var visibility = "shared"
        do {
            let content = try await http.call(.GET, room + "/state/m.room.history_visibility/", as: LenientJSON.self)
                .value
            if let value = content["history_visibility"]?.stringValue { visibility = value }
        } catch let error where error.status == 404 {}
        struct Members: Decodable {
            struct Event: Decodable {
                struct Content: Decodable { var membership: String? }
                var state_key: String?
                var content: Content?
            }
            var chunk: [Event]
        }
        let members = try await http.call(
            .GET, room + "/members", query: [("not_membership", "leave")], as: Members.self)
        let invitedRead = visibility != "joined"
        var users: [String] = []
        var seen = Set<String>()
        for event in members.chunk {
            guard let user = event.state_key, let membership = event.content?.membership,
                membership == "join" || (membership == "invite" && invitedRead), seen.insert(user).inserted
            else { continue }
            users.append(user)
        }
        return Readers(users: users, historyVisibility: visibility)
    }
}
