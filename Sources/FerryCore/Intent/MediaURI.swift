/// An `mxc://server/media-id` URI, checked: a server name of the characters the spec allows and a
/// media id of `[A-Za-z0-9_-]`, so that neither can reach a path or a query of its own.
public struct MediaURI: Sendable, Equatable, Hashable {
    public let server: String
    public let mediaID: String

    public init?(_ text: String) {
        guard text.hasPrefix("mxc://") else { return nil }
        let parts = text.dropFirst(6).split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        let (server, media) = (String(parts[0]), String(parts[1]))
        let serverCharacters = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:[]")
        let mediaCharacters = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")
        // A host name or an IP literal: it starts with a letter, a digit or "[", and has no empty
        // label (so never "." or "..", which a proxy would read as a step up the path).
        guard (1...255).contains(server.count), server.allSatisfy(serverCharacters.contains),
            server.first.map({ $0.isLetter || $0.isNumber || $0 == "[" }) == true, !server.contains(".."),
            !server.hasSuffix("."), (1...255).contains(media.count), media.allSatisfy(mediaCharacters.contains)
        else { return nil }
        self.server = server
        self.mediaID = media
    }

    public var text: String { "mxc://\(server)/\(mediaID)" }
}

/// The sizes a person's or a room's picture may be asked at (`GetAvatar`), in pixels square.
public enum AvatarSizes {
    public static let allowed = 16...512
}
