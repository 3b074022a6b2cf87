import CGLib

/// Content types from shared-mime-info, through GIO.
public enum ContentType {
    /// Guesses a type from a file name and the first bytes of its content.
    ///
    /// The content decides when it is recognised (a PNG named `.txt` is image/png): a name can lie,
    /// magic bytes rarely do. The name decides when the content is generic (plain text, unknown bytes).
    /// The name also decides between the kinds of a container the content names only as the
    /// container: a WebM recorded as a stream reads as plain Matroska.
    public static func guess(name: String?, leadingBytes data: [UInt8]) -> String {
        let byContent = rawGuess(name: nil, data: data)
        if !byContent.uncertain, !isGeneric(byContent.type) {
            guard let kinds = containerKinds[byContent.type] else { return byContent.type }
            let byBoth = rawGuess(name: name, data: data)
            return kinds.contains(byBoth.type) ? byBoth.type : byContent.type
        }
        let byBoth = rawGuess(name: name, data: data)
        return mimeType(byBoth.type)
    }

    /// Containers whose content does not say what they hold, and the kinds a file's name may say.
    static let containerKinds: [String: Set<String>] = [
        "application/x-matroska": ["video/webm", "audio/webm", "video/x-matroska", "audio/x-matroska"]
    ]

    /// Whether `type` is `supertype` or derives from it (text/x-python is text/plain).
    public static func isA(_ type: String, _ supertype: String) -> Bool {
        g_content_type_is_a(type, supertype) != 0
    }

    /// A person's name for the type ("PNG image").
    public static func description(of type: String) -> String {
        guard let text = g_content_type_get_description(type) else { return type }
        defer { g_free(text) }
        return String(cString: text)
    }

    private static func isGeneric(_ type: String) -> Bool {
        type == "text/plain" || type == "application/octet-stream" || g_content_type_is_unknown(type) != 0
    }

    private static func mimeType(_ type: String) -> String {
        guard let mime = g_content_type_get_mime_type(type) else { return "application/octet-stream" }
        defer { g_free(mime) }
        return String(cString: mime)
    }

    private static func rawGuess(name: String?, data: [UInt8]) -> (type: String, uncertain: Bool) {
        var uncertain: gboolean = 0
        let type = data.withUnsafeBufferPointer { buffer in
            g_content_type_guess(name, buffer.baseAddress, gsize(buffer.count), &uncertain)
        }
        guard let type else { return ("application/octet-stream", true) }
        defer { g_free(type) }
        return (String(cString: type), uncertain != 0)
    }
}
