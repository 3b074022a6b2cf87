/// A `ferry:share?title=…&text=…&url=…&to=…` URI: the Web Share Target fields, form-encoded.
public struct FerryLink: Equatable, Sendable {
    /// `title=`: the shared page's title, sent as the share's subject.
    public var title: String?
    /// `text=`: words to share.
    public var text: String?
    /// `url=`: the link to share.
    public var url: String?
    /// `to=` (repeatable): destinations to preselect in the dialog, never sent to without a person.
    public var destinations: [String]

    /// The URI scheme Ferry registers for (`x-scheme-handler/ferry`).
    public static let scheme = "ferry"

    /// Parses the URI; accepts `ferry:share?…` and `ferry://share?…`.
    public init(parsing uri: String) throws(ShareError) {
        guard let colon = uri.firstIndex(of: ":"), uri[..<colon].lowercased() == Self.scheme else {
            // TRANSLATORS: the reason in "{uri} is not a URI Ferry understands: {reason}."
            throw .invalidURI(uri, reason: tr("it is not a ferry: URI"))
        }
        var rest = uri[uri.index(after: colon)...]
        if rest.hasPrefix("//") { rest = rest.dropFirst(2) }
        let action = rest.prefix { $0 != "?" && $0 != "#" }
        guard action == "share" || action == "share/" else {
            // TRANSLATORS: the reason in "{uri} is not a URI Ferry understands: {reason}."; keep ferry:share?… as it
            // is.
            throw .invalidURI(uri, reason: tr("Ferry knows only ferry:share?…"))
        }
        var query = rest.dropFirst(action.count)
        if query.hasPrefix("?") { query = query.dropFirst() }
        if let hash = query.firstIndex(of: "#") { query = query[..<hash] }
        destinations = []
        for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let key = FormDecoding.decode(parts[0]),
                let value = FormDecoding.decode(parts.count > 1 ? parts[1] : "")
            else {
                // TRANSLATORS: the reason in "{uri} is not a URI Ferry understands: {reason}."
                throw .invalidURI(uri, reason: tr("its query is not valid percent-encoded UTF-8"))
            }
            switch key {
            case "title": title = value
            case "text": text = value
            case "url": url = value
            // An empty `to=` (e.g. `to=#room:server` unescaped, where `#` starts the fragment) names nothing.
            case "to": if !value.isEmpty { destinations.append(value) }
            default: continue // Unknown fields are ignored, as Web Share Target does.
            }
        }
        if (text ?? "").isEmpty && (url ?? "").isEmpty {
            // TRANSLATORS: the reason in "{uri} is not a URI Ferry understands: {reason}."; keep text= and url= as they
            // are.
            throw .invalidURI(uri, reason: tr("it has neither text= nor url="))
        }
    }

    /// The request this link stands for: `url` makes a link share whose message is `text`.
    public func request(source: IntakeSource) -> ShareRequest {
        if let url, !url.isEmpty {
            let message = (text ?? "").isEmpty ? nil : text
            return ShareRequest(text: url, subject: title, message: message, destinations: destinations, source: source)
        }
        return ShareRequest(text: text, subject: title, destinations: destinations, source: source)
    }
}

/// application/x-www-form-urlencoded decoding: `+` is a space, `%XX` a byte, and the bytes UTF-8.
enum FormDecoding {
    static func decode(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "+"): bytes.append(UInt8(ascii: " "))
            case UInt8(ascii: "%"):
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                    return nil
                }
                bytes.append(high << 4 | low)
            default: bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
