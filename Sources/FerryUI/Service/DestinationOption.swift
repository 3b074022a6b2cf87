import FerryContract
import FerryCore

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

    /// One of ListDestinations' answers.
    public init(_ listing: DestinationListing) {
        id = listing.id
        kind = Kind(rawValue: listing.kind.rawValue) ?? .room
        name = listing.name
        alias = listing.alias
        userID = listing.userID
        members = UInt32(clamping: listing.members)
        isEncrypted = listing.encrypted
        isRecent = listing.recent
    }

    public init(
        id: String, kind: Kind, name: String, alias: String? = nil, userID: String? = nil, members: UInt32 = 0,
        isEncrypted: Bool = false, isRecent: Bool = false
    ) {
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
        let count = Int(members)
        switch kind {
        // TRANSLATORS: the second line of a person's row in "Share to"; {user} is a Matrix user id.
        case .person: plain = tr("{user} · new direct chat", ["user": userID ?? id])
        case .direct: plain = userID ?? tr("Direct chat")
        case .room:
            if let alias, alias != displayName {
                // TRANSLATORS: the second line of a room's row in "Share to"; {alias} is its address,
                // "#team:example.org".
                plain = trn("{alias} · {count} member", "{alias} · {count} members", count, ["alias": alias])
            } else {
                plain = members > 0 ? trn("{count} member", "{count} members", count) : (alias ?? "")
            }
        }
        guard isEncrypted else { return plain }
        if plain.isEmpty { return tr("End-to-end encrypted") }
        // TRANSLATORS: {detail} is the rest of a room's second line, "#team:example.org · 3 members".
        return tr("{detail} · end-to-end encrypted", ["detail": plain])
    }
}
