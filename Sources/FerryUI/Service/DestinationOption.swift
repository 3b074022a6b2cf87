import GLibAdapter

/// A room, direct chat or person a share can go to, as ListDestinations describes it.
public struct DestinationOption: Equatable {
    public enum Kind: String { case room, direct, person }

    /// What CompleteShare takes: a room id, or a user id for a new direct chat.
    public var id: String
    public var kind: Kind
    public var name: String
    public var alias: String?
    public var userID: String?
    public var members: UInt32
    public var isEncrypted: Bool
    public var isRecent: Bool

    public init?(_ dict: [String: Variant]) {
        guard let id = dict["id"]?.stringValue, !id.isEmpty else { return nil }
        self.id = id
        kind = dict["kind"]?.stringValue.flatMap(Kind.init(rawValue:)) ?? .room
        name = dict["name"]?.stringValue ?? ""
        alias = dict["alias"]?.stringValue
        userID = dict["user-id"]?.stringValue
        if case .uint32(let count)? = dict["members"] { members = count } else { members = 0 }
        isEncrypted = dict["encrypted"]?.boolValue ?? false
        isRecent = dict["recent"]?.boolValue ?? false
    }

    public init(id: String, kind: Kind, name: String, alias: String? = nil, userID: String? = nil, members: UInt32 = 0,
                isEncrypted: Bool = false, isRecent: Bool = false) {
        self.id = id
        self.kind = kind
        self.name = name
        self.alias = alias
        self.userID = userID
        self.members = members
        self.isEncrypted = isEncrypted
        self.isRecent = isRecent
    }

    /// The name to show: the room's name, else its alias, the person, or the id.
    public var displayName: String { [name, alias ?? "", userID ?? ""].first { !$0.isEmpty } ?? id }

    /// The second line of its row.
    public var detail: String {
        let plain: String
        switch kind {
        case .person: plain = (userID ?? id) + " · new direct chat"
        case .direct: plain = userID ?? "Direct chat"
        case .room:
            let members = self.members == 1 ? "1 member" : "\(self.members) members"
            if let alias, alias != displayName { plain = alias + " · " + members } else { plain = self.members > 0 ? members : (alias ?? "") }
        }
        guard isEncrypted else { return plain }
        return plain.isEmpty ? "End-to-end encrypted" : plain + " · end-to-end encrypted"
    }
}
