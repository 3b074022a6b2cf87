/// What Ferry learns from a video or a sound before it sends it: how long it plays and, for a video,
/// the size it is shown at with a poster frame as its thumbnail. `ferry-media` writes it as one
/// line of JSON; the sender reads it into the event's `info` (`duration`, `w`, `h`,
/// `thumbnail_info`), as Element X sends `m.video` and `m.audio`.
public struct MediaFacts: Codable, Sendable, Equatable {
    /// How long it plays, in milliseconds (`info.duration`); nil where the file does not say.
    public var duration: Int?
    /// A video's facts as a picture's: its size as shown (rotation and pixel shape applied), its
    /// poster frame as the thumbnail, the poster's blurhash. Nil for a sound.
    public var picture: PictureFacts?

    public init(duration: Int?, picture: PictureFacts? = nil) {
        self.duration = duration
        self.picture = picture
    }

    /// The longest duration believed: a week. A header that claims more is wrong or crafted.
    public static let longestDuration = 7 * 24 * 3600 * 1000

    /// Whether the facts are ones a video or a sound can have (the helper reads files from
    /// anywhere; what it says is checked before it reaches an event).
    public var isSound: Bool {
        if let duration, !(0...Self.longestDuration).contains(duration) { return false }
        return picture?.isSound ?? true
    }

    /// The facts as JSON under their Codable names, for a writer without Foundation (the helper).
    public var json: JSONValue {
        var members: [String: JSONValue] = [:]
        if let duration { members["duration"] = .int(Int64(duration)) }
        if let picture { members["picture"] = picture.json }
        return .object(members)
    }
}

/// How a video stream's stored frame becomes the size it is shown at.
public enum VideoShape {
    /// The shown size of frames stored `width` × `height` with pixels `parN`/`parD` as wide as
    /// tall, turned by `orientation` (GStreamer's `image-orientation` tag: "rotate-90",
    /// "flip-rotate-270"…, as phones record a video held upright).
    public static func shownSize(
        width: Int, height: Int, parN: Int, parD: Int, orientation: String?
    ) -> (width: Int, height: Int)? {
        guard width > 0, height > 0 else { return nil }
        var shownWidth = width
        if parN > 0, parD > 0, parN != parD {
            shownWidth = max(1, Int((Double(width) * Double(parN) / Double(parD)).rounded()))
        }
        let sideways = ["rotate-90", "rotate-270", "flip-rotate-90", "flip-rotate-270"].contains(orientation ?? "")
        return sideways ? (height, shownWidth) : (shownWidth, height)
    }
}
