/// One share's content, the Android `ACTION_SEND` / `ACTION_SEND_MULTIPLE` analogue: the only value
/// that crosses from intake to routing, the outbox and the sender. Immutable once made.
public struct ShareIntent: Equatable, Sendable {
    /// One item or several, as Android's ACTION_SEND and ACTION_SEND_MULTIPLE.
    public let action: ShareAction
    /// The files, texts and links, in the order they were given; never empty.
    public let items: [ShareItem]
    /// The common type of the items: "image/png", "image/*", "*/*", "text/plain".
    public let contentType: String
    /// A subject (a shared page's title), sent with a link.
    public let subject: String?
    /// The person's own message, sent first (or with the link, as one message).
    public let message: String?
    /// Where the share goes; empty while it waits for a person to choose.
    public let destinations: [String]
    /// How the share reached Ferry.
    public let source: IntakeSource
    /// Destinations a `ferry:` link named: only preselected in the dialog, never sent to without a
    /// person choosing them (a web page can open a link; docs/CONTRACT.md).
    public let suggestedDestinations: [String]

    /// An intent of at least one item; the action and the common content type follow from the items.
    public init(
        items: [ShareItem], subject: String?, message: String?, destinations: [String], source: IntakeSource,
        suggestedDestinations: [String] = []
    ) {
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
        ShareIntent(
            items: items, subject: subject, message: message, destinations: destinations, source: source,
            suggestedDestinations: suggestedDestinations)
    }
}

/// The intent's action, named as the D-Bus API and the database write it.
public enum ShareAction: String, Sendable, Codable {
    /// One item.
    case send = "send"
    /// Several items.
    case sendMultiple = "send-multiple"
}

/// One thing in a share: a staged file, a text, or a link.
public struct ShareItem: Equatable, Sendable {
    /// A staged file, a text, or a link (sent as text, for clients to preview).
    public enum Kind: String, Sendable, Codable {
        /// A file, staged in the spool; sent as its own message with an upload.
        case file
        /// Words, sent in the share's text message.
        case text
        /// A URL, sent in the share's text message, last, so clients preview it.
        case link
    }

    /// What the item is.
    public var kind: Kind
    /// For files the display name, stored exactly; for texts and links the text itself.
    public var name: String
    /// The MIME type: a file's as GIO guessed it from name and content, text/plain for texts and links.
    public var contentType: String
    /// A file's size, or a text's length, in bytes.
    public var size: UInt64
    /// Where a file came from.
    public var uri: String?
    /// The words of a text or link item.
    public var text: String?

    /// An item as intake makes it or the outbox reads it back.
    public init(kind: Kind, name: String, contentType: String, size: UInt64, uri: String? = nil, text: String? = nil) {
        self.kind = kind
        self.name = name
        self.contentType = contentType
        self.size = size
        self.uri = uri
        self.text = text
    }

    /// A text item: its name and its words are the text.
    public static func text(_ text: String) -> ShareItem {
        ShareItem(kind: .text, name: text, contentType: "text/plain", size: UInt64(text.utf8.count), text: text)
    }

    /// A link item: its name and its words are the URL.
    public static func link(_ url: String) -> ShareItem {
        ShareItem(kind: .link, name: url, contentType: "text/plain", size: UInt64(url.utf8.count), text: url)
    }
}
