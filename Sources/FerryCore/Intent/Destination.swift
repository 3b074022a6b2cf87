/// Where a share goes, as a person or client names it. Room ids are opaque (room version 12 ids
/// have no server part), so only the sigil and the presence of a server in aliases and user ids are checked.
public enum Destination {
    /// What a destination names: a room by id (`!`), a room by alias (`#…:server`), or a person (`@…:server`), whose
    /// direct chat it means.
    public enum Kind: Equatable, Sendable {
        /// `!opaque`: a room by its id.
        case roomID
        /// `#name:server`: a room by an alias, resolved when sent.
        case roomAlias
        /// `@name:server`: a person; the share goes to their direct chat, made if there is none.
        case userID
    }

    /// The server part of a user id: `@me:example.org` → `example.org`; nil for what is not one.
    public static func serverName(ofUser user: String) -> String? {
        guard user.hasPrefix("@"), let colon = user.firstIndex(of: ":") else { return nil }
        let server = user[user.index(after: colon)...]
        return server.isEmpty ? nil : String(server)
    }

    /// The kind of `destination`, or nil when it is none of them (a wrong sigil, whitespace, no server, over 255
    /// bytes).
    public static func kind(of destination: String) -> Kind? {
        guard let sigil = destination.first, destination.count > 1, destination.utf8.count <= 255,
            !destination.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.value < 0x20 })
        else {
            return nil
        }
        let rest = destination.dropFirst()
        switch sigil {
        case "!": return .roomID
        case "#": return hasServer(rest) ? .roomAlias : nil
        case "@": return hasServer(rest) ? .userID : nil
        default: return nil
        }
    }

    private static func hasServer(_ text: Substring) -> Bool {
        guard let colon = text.firstIndex(of: ":") else { return false }
        return colon != text.startIndex && text.index(after: colon) != text.endIndex
    }
}
