import FerryCore
import GLibAdapter

/// One of `ListDestinations`' answers: a room, a direct chat or a person a share can go to.
public struct DestinationListing: Equatable, Sendable {
    public enum Kind: String, Sendable { case room, direct, person }

    /// What CompleteShare takes: a room id, or a user id for a new direct chat.
    public var id: String
    public var kind: Kind
    public var name: String
    public var alias: String?
    public var userID: String?
    public var members: Int
    public var encrypted: Bool
    /// Shared to lately (listed first).
    public var recent: Bool
    /// The room's last event, µs since the epoch.
    public var lastActivity: Int64?
    /// The signed-in account whose room or contact this is (its user id); a share to it goes out
    /// as that account. Nil from a service older than several accounts.
    public var account: String?
    /// Its picture (`mxc:`): the room's, or for a direct chat or a person the person's. `GetAvatar`
    /// makes it a file.
    public var avatar: String?

    /// Whether it is the same row: the same room or person of the same account (a room two
    /// accounts have joined is listed once for each).
    public func isSame(as other: DestinationListing) -> Bool { id == other.id && account == other.account }

    public init(
        id: String, kind: Kind, name: String, alias: String? = nil, userID: String? = nil, members: Int = 0,
        encrypted: Bool = false, lastActivity: Int64? = nil, recent: Bool = false, account: String? = nil
    ) {
        self.account = account
        self.id = id
        self.kind = kind
        self.name = name
        self.alias = alias
        self.userID = userID
        self.members = members
        self.encrypted = encrypted
        self.recent = recent
        self.lastActivity = lastActivity
    }

    public var dictionary: [String: Variant] {
        var dict: [String: Variant] = [
            "id": .string(id), "kind": .string(kind.rawValue), "name": .string(name),
            "members": .uint32(UInt32(clamping: members)), "encrypted": .bool(encrypted), "recent": .bool(recent),
        ]
        if let alias { dict["alias"] = .string(alias) }
        if let userID { dict["user-id"] = .string(userID) }
        if let lastActivity { dict["last-activity"] = .int64(lastActivity) }
        if let account { dict["account"] = .string(account) }
        if let avatar { dict["avatar"] = .string(avatar) }
        return dict
    }

    /// Reads one entry back; nil without an id.
    public init?(_ dict: [String: Variant]) {
        guard let id = dict["id"]?.stringValue, !id.isEmpty else { return nil }
        self.id = id
        kind = dict["kind"]?.stringValue.flatMap(Kind.init(rawValue:)) ?? .room
        name = dict["name"]?.stringValue ?? ""
        alias = dict["alias"]?.stringValue
        userID = dict["user-id"]?.stringValue
        members = Int(dict["members"]?.uint32Value ?? 0)
        encrypted = dict["encrypted"]?.boolValue ?? false
        recent = dict["recent"]?.boolValue ?? false
        lastActivity = dict["last-activity"]?.int64Value
        account = dict["account"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
        avatar = dict["avatar"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
    }
}
