/// A checked request: what will become the share's items, before files are staged.
///
/// Making a plan is pure: it checks counts, lengths, destinations and how text, message and
/// URIs combine. Whether a file exists and can be read is staging's job.
public struct SharePlan: Equatable, Sendable {
    /// One item of the plan, before any file is read.
    public enum Item: Equatable, Sendable {
        /// A file to stage, by URI (file: or any scheme GIO may read).
        case file(uri: String)
        /// A text to send.
        case text(String)
        /// A link to send (a URI no file stands behind, such as https:).
        case link(String)
    }

    /// The items, in the order they were given.
    public var items: [Item]
    /// The subject, checked against `Limits.maxSubjectBytes`.
    public var subject: String?
    /// The person's message, checked against `Limits.maxTextBytes`.
    public var message: String?
    /// Destinations, each checked to be a room id, alias or user id, without repeats.
    public var destinations: [String]
    /// How the request reached Ferry.
    public var source: IntakeSource
    /// A `ferry:` link's `to=`: preselected in the dialog, never sent to without a person.
    public var suggestedDestinations: [String] = []

    /// Checks `request` against `limits` and plans it; throws the first thing wrong, naming it.
    public init(request: ShareRequest, limits: Limits) throws(ShareError) {
        self = try Self.make(request: request, limits: limits)
    }

    private init(items: [Item], subject: String?, message: String?, destinations: [String], source: IntakeSource) {
        self.items = items
        self.subject = subject
        self.message = message
        self.destinations = destinations
        self.source = source
    }

    private static func make(request: ShareRequest, limits: Limits) throws(ShareError) -> SharePlan {
        // Counted before anything else is looked at, so 10,000 URIs cost nothing.
        guard request.uris.count <= limits.maxItems else {
            throw .tooManyItems(count: request.uris.count, limit: limits.maxItems)
        }
        if let link = try Self.singleFerryLink(in: request) {
            // Any web page or document can open a link: what it names is only a suggestion. The
            // destinations of the call itself (a program of the person's own) still count.
            var expanded = link.request(source: .uri)
            expanded.destinations = request.destinations
            if expanded.subject == nil { expanded.subject = request.subject }
            guard link.destinations.count <= limits.maxDestinations else {
                throw .invalidArgument(Self.tooManyDestinations(link.destinations.count, limit: limits.maxDestinations))
            }
            for destination in link.destinations where Destination.kind(of: destination) == nil {
                throw .invalidDestination(destination)
            }
            var plan = try make(request: expanded, limits: limits)
            plan.suggestedDestinations = unique(link.destinations)
            return plan
        }
        // Each field name is a whole translated sentence in ShareError.message: keep them in step.
        try Self.checkLength(request.subject, field: .subject, limit: limits.maxSubjectBytes)
        try Self.checkLength(request.message, field: .message, limit: limits.maxTextBytes)
        try Self.checkLength(request.text, field: .text, limit: limits.maxTextBytes)
        guard request.destinations.count <= limits.maxDestinations else {
            throw .invalidArgument(Self.tooManyDestinations(request.destinations.count, limit: limits.maxDestinations))
        }
        for destination in request.destinations where Destination.kind(of: destination) == nil {
            throw .invalidDestination(destination)
        }
        let subject = nonBlank(request.subject)
        let destinations = unique(request.destinations)
        let items: [Item]
        let message: String?

        if !request.uris.isEmpty {
            if Self.nonBlank(request.text) != nil, Self.nonBlank(request.message) != nil {
                // TRANSLATORS: “text” and “message” are names of Share's options; keep them as they are.
                throw .invalidArgument(tr("Give the words that go with the files as “text” or as “message”, not both."))
            }
            items = request.uris.map { .file(uri: $0) }
            message = Self.nonBlank(request.message) ?? Self.nonBlank(request.text)
        } else if let text = request.text {
            guard Self.nonBlank(text) != nil else { throw .emptyText }
            if let url = TextKind.link(in: text) {
                items = [.link(url)]
                message = Self.nonBlank(request.message)
            } else {
                guard Self.nonBlank(request.message) == nil else {
                    throw .invalidArgument(
                        // TRANSLATORS: “text” and “message” are names of Share's options; keep them as they are.
                        tr("A text share carries its words in “text”; “message” goes with files and links."))
                }
                items = [.text(text)]
                message = nil
            }
        } else {
            throw .emptyShare
        }
        // The words go out as one event (Composition): counted as the server will count them.
        let words =
            [message].compactMap { $0 }
            + items.compactMap { item -> String? in
                switch item {
                case .text(let text), .link(let text): return text
                case .file: return nil
                }
            }
        try EventSize.check(words: words)
        return SharePlan(
            items: items, subject: subject, message: message, destinations: destinations,
            source: request.source)
    }

    /// The `ferry:` link when the URIs are exactly one; refuses a `ferry:` URI mixed with files.
    private static func singleFerryLink(in request: ShareRequest) throws(ShareError) -> FerryLink? {
        let ferryURIs = request.uris.filter { uriScheme($0) == FerryLink.scheme }
        guard !ferryURIs.isEmpty else { return nil }
        guard request.uris.count == 1 else {
            throw .invalidArgument(
                tr("A ferry: URI is a share of its own and cannot be shared together with other URIs."))
        }
        guard request.text == nil, request.message == nil else {
            // TRANSLATORS: “text” and “message” are names of Share's options; keep them as they are.
            throw .invalidArgument(tr("A ferry: URI carries its own text; do not give “text” or “message” with it."))
        }
        return try FerryLink(parsing: ferryURIs[0])
    }

    /// The scheme of a URI per RFC 3986 (letter, then letters, digits, + - .), lower-cased.
    public static func uriScheme(_ uri: String) -> String? {
        guard let colon = uri.firstIndex(of: ":") else { return nil }
        let scheme = uri[..<colon]
        guard let first = scheme.unicodeScalars.first, first.isASCII, first.properties.isAlphabetic,
            scheme.unicodeScalars.allSatisfy({
                $0.isASCII
                    && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "+-.".unicodeScalars.contains($0))
            })
        else { return nil }
        return scheme.lowercased()
    }

    private static func tooManyDestinations(_ count: Int, limit: Int) -> String {
        trn(
            // TRANSLATORS: {count} is always more than {limit}.
            "{count} destination is too many; the limit is {limit}.",
            "{count} destinations are too many; the limit is {limit}.",
            count, ["limit": String(limit)])
    }

    private static func checkLength(_ text: String?, field: ShareError.TextField, limit: Int) throws(ShareError) {
        if let text, text.utf8.count > limit { throw .textTooLong(field: field, bytes: text.utf8.count, limit: limit) }
    }

    private static func nonBlank(_ text: String?) -> String? {
        guard let text, !text.trimmingWhitespace().isEmpty else { return nil }
        return text
    }

    private static func unique(_ list: [String]) -> [String] {
        var seen: Set<String> = []
        return list.filter { seen.insert($0).inserted }
    }
}
