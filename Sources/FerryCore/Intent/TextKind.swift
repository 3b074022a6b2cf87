/// Whether a shared text is a link: a single URL and nothing else, as Android's share sheet decides.
public enum TextKind {
    /// Schemes that make a text a link when it is nothing but one URI of them.
    static let linkSchemes: Set<String> = [
        "http", "https", "ftp", "ftps", "matrix", "mailto", "geo", "tel",
        "xmpp", "magnet", "sms", "gemini",
    ]
    /// Schemes whose URIs must name a host (`https://host…`).
    static let hierarchical: Set<String> = ["http", "https", "ftp", "ftps", "gemini"]

    /// The URL if `text`, trimmed, is exactly one link; nil otherwise.
    public static func link(in text: String) -> String? {
        let trimmed = text.trimmingWhitespace()
        guard !trimmed.isEmpty, !trimmed.unicodeScalars.contains(where: { $0.properties.isWhitespace }),
            let colon = trimmed.firstIndex(of: ":")
        else { return nil }
        let scheme = trimmed[..<colon].lowercased()
        guard linkSchemes.contains(scheme) else { return nil }
        let rest = trimmed[trimmed.index(after: colon)...]
        if hierarchical.contains(scheme) {
            guard rest.hasPrefix("//"), rest.count > 2, rest.dropFirst(2).first != "/" else { return nil }
        } else if rest.isEmpty {
            return nil
        }
        return trimmed
    }
}

extension String {
    /// The string without leading and trailing white space (Unicode's definition), without Foundation.
    public func trimmingWhitespace() -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }) else { return "" }
        let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })!
        return String(scalars[first...last])
    }
}
