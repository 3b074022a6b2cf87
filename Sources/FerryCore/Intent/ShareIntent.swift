/// One share's content, the Android `ACTION_SEND` / `ACTION_SEND_MULTIPLE` analogue: the only value
/// that crosses from intake to routing, the outbox and the sender. Immutable once made.
public struct ShareIntent: Equatable, Sendable {
    public let action: ShareAction
    public let items: [ShareItem]
    /// The common type of the items: "image/png", "image/*", "*/*", "text/plain".
    public let contentType: String
    public let subject: String?
    public let message: String?
    public let destinations: [String]
    public let source: IntakeSource
    /// Destinations a `ferry:` link named: only preselected in the dialog, never sent to without a
    /// person choosing them (a web page can open a link; docs/CONTRACT.md).
    public let suggestedDestinations: [String]

    public init(items: [ShareItem], subject: String?, message: String?, destinations: [String], source: IntakeSource,
                suggestedDestinations: [String] = []) {
        precondition(!items.isEmpty, "a share has at least one item")
        self.action = items.count == 1 ? .send : .sendMultiple
        self.items = items
        self.contentType = ContentTypeFamily.commonType(of: items.map(\.contentType))
        self.subject = subject
        self.message = message
        self.destinations = destinations
        self.source = source
        self.suggestedDestinations = suggestedDestinations
    }

    /// The same intent with destinations chosen later (the dialog, or `CompleteShare`).
    public func with(destinations: [String], message: String?) -> ShareIntent {
        ShareIntent(items: items, subject: subject, message: message, destinations: destinations, source: source,
                    suggestedDestinations: suggestedDestinations)
    }
}

public enum ShareAction: String, Sendable, Codable {
    case send = "send"
    case sendMultiple = "send-multiple"
}

/// One thing in a share: a staged file, a text, or a link.
public struct ShareItem: Equatable, Sendable {
    public enum Kind: String, Sendable, Codable { case file, text, link }

    public var kind: Kind
    /// For files the display name, stored exactly; for texts and links the text itself.
    public var name: String
    public var contentType: String
    public var size: UInt64
    /// Where a file came from.
    public var uri: String?
    /// The words of a text or link item.
    public var text: String?

    public init(kind: Kind, name: String, contentType: String, size: UInt64, uri: String? = nil, text: String? = nil) {
        self.kind = kind
        self.name = name
        self.contentType = contentType
        self.size = size
        self.uri = uri
        self.text = text
    }

    public static func text(_ text: String) -> ShareItem {
        ShareItem(kind: .text, name: text, contentType: "text/plain", size: UInt64(text.utf8.count), text: text)
    }

    public static func link(_ url: String) -> ShareItem {
        ShareItem(kind: .link, name: url, contentType: "text/plain", size: UInt64(url.utf8.count), text: url)
    }
}
