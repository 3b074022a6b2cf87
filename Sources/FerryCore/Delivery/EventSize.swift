/// The size of a text event as the homeserver counts it, checked when a share is accepted.
///
/// A server refuses an event over 65,536 bytes of JSON (M_TOO_LARGE). The per-field limits do not
/// see that: a message and a link of 32 KB each go out as one event, and JSON escaping makes a
/// control character six bytes. A share that cannot be sent is refused at intake, never accepted
/// and then failed.
public enum EventSize {
    /// The server's limit on a whole event, in bytes of JSON.
    public static let limit = 65_536
    /// Room for what the server adds around the content: ids, the sender, hashes, signatures,
    /// previous events, timestamps.
    public static let envelope = 4_096
    /// What every event's content has around the body: `{"msgtype":"m.text","body":` and `}` (30
    /// bytes), `"m.mentions":{}` (16) and Ferry's transaction tag (about 70); a caption's file
    /// fields (url, filename, info) fit in the envelope's margin.
    static let contentOverhead = 120

    /// The longest body, in bytes of JSON, a text event may carry.
    public static var bodyLimit: Int { limit - envelope - contentOverhead }

    /// Bytes of `text` as a JSON string, quotes and escapes included.
    public static func jsonBytes(_ text: String) -> Int {
        var count = 2
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), 0x08, 0x0C, 0x0A, 0x0D, 0x09: count += 2
            case 0..<0x20: count += 6
            default: count += 1
            }
        }
        return count
    }

    /// Refuses a text event whose body (the words that go out as one message) would be too large.
    public static func check(words: [String]) throws(ShareError) {
        guard !words.isEmpty else { return }
        let bytes = jsonBytes(words.joined(separator: "\n"))
        if bytes > bodyLimit {
            throw .textTooLong(
                field: words.count > 1 ? .messageWithTextAsSent : .textAsSent,
                bytes: bytes, limit: bodyLimit)
        }
    }
}
