/// The product design's composition rules: how one share becomes Matrix messages.
///
/// - plain text → one text message;
/// - a link, with or without a message → one text message, the message and the link together;
/// - one file with a message → one media message whose caption is the message (Matrix 1.10's
///   captions, as Element X sends them);
/// - several files → the message first as its own text message when there is one, then each file
///   as its own message, in the order they were shared.
public enum Composition {
    /// One message a share becomes, in the order they are sent.
    public enum Step: Equatable, Sendable {
        /// A text message with this body: the message, texts and links of the share together.
        case text(String)
        /// The file at this index of the share's items.
        case file(item: Int)
        /// The file at this index, with the message as its caption (the event's `body`).
        case captionedFile(item: Int, caption: String)
    }

    /// The messages `intent` becomes: the words first (when there are any), then one per file.
    public static func steps(for intent: ShareIntent) -> [Step] {
        var steps: [Step] = []
        var words: [String] = []
        if let message = intent.message { words.append(message) }
        var files: [Int] = []
        for (index, item) in intent.items.enumerated() {
            switch item.kind {
            case .text: words.append(item.text ?? item.name)
            case .link: words.append(item.text ?? item.name)
            case .file: files.append(index)
            }
        }
        // One file and a message alone: one event, the message its caption.
        if files.count == 1, words.count == 1, let message = intent.message {
            return [.captionedFile(item: files[0], caption: message)]
        }
        // A message with a link is one message: the link last, on its own line, so clients preview it.
        if !words.isEmpty { steps.append(.text(words.joined(separator: "\n"))) }
        steps += files.map { .file(item: $0) }
        return steps
    }

    /// The Matrix message type for a file's content type.
    public static func messageType(forContentType type: String) -> String {
        if type.hasPrefix("image/") { return "m.image" }
        if type.hasPrefix("video/") { return "m.video" }
        if type.hasPrefix("audio/") { return "m.audio" }
        return "m.file"
    }
}
