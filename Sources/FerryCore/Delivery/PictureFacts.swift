/// What Ferry learns from a picture before it sends it: the size it is shown at, a thumbnail where
/// the picture is too large to be its own, and a blurred placeholder. `ferry-thumbnail` writes it
/// as one line of JSON; the sender reads it into the event's `info`.
public struct PictureFacts: Codable, Sendable, Equatable {
    /// The picture's size as it is shown: its EXIF orientation applied (a portrait photo stored
    /// sideways is taller than wide).
    public var width: Int
    public var height: Int
    /// The thumbnail written beside the picture, when the picture needed one.
    public var thumbnail: Thumbnail?
    /// `xyz.amorgan.blurhash`, computed from the thumbnail (or the picture when it is small).
    public var blurhash: String?

    public struct Thumbnail: Codable, Sendable, Equatable {
        public var width: Int
        public var height: Int
        public var mimetype: String
        public var size: UInt64

        public init(width: Int, height: Int, mimetype: String, size: UInt64) {
            self.width = width
            self.height = height
            self.mimetype = mimetype
            self.size = size
        }
    }

    public init(width: Int, height: Int, thumbnail: Thumbnail? = nil, blurhash: String? = nil) {
        self.width = width
        self.height = height
        self.thumbnail = thumbnail
        self.blurhash = blurhash
    }

    /// Whether the facts are ones a picture can have: sizes above zero, a thumbnail of a type the
    /// helper writes and within the thumbnail box, a blurhash of the hash's alphabet. The helper
    /// decodes files from anywhere; what it says is checked before it reaches an event.
    public var isSound: Bool {
        guard width > 0, height > 0 else { return false }
        if let thumbnail {
            guard ["image/jpeg", "image/png"].contains(thumbnail.mimetype), thumbnail.size > 0,
                (1...ThumbnailRule.maximumWidth).contains(thumbnail.width),
                (1...ThumbnailRule.maximumHeight).contains(thumbnail.height)
            else { return false }
        }
        if let blurhash {
            guard (6...100).contains(blurhash.count), blurhash.allSatisfy(Blurhash.alphabet.contains) else {
                return false
            }
        }
        return true
    }

    /// The facts as JSON under their Codable names, for a writer without Foundation (the
    /// helper): what `JSONDecoder` reads back into this value.
    public var json: JSONValue {
        var members: [String: JSONValue] = ["width": .int(Int64(width)), "height": .int(Int64(height))]
        if let thumbnail {
            members["thumbnail"] = [
                "width": .int(Int64(thumbnail.width)), "height": .int(Int64(thumbnail.height)),
                "mimetype": .string(thumbnail.mimetype), "size": .int(Int64(thumbnail.size)),
            ]
        }
        if let blurhash { members["blurhash"] = .string(blurhash) }
        return .object(members)
    }
}

/// When a picture gets a thumbnail, and how large it is: the rules Element's clients follow.
public enum ThumbnailRule {
    /// The largest thumbnail, in pixels.
    public static let maximumWidth = 800
    public static let maximumHeight = 600
    /// A picture of more bytes than this gets a thumbnail even when it is small in pixels (a
    /// phone on a slow link should not fetch a megabyte to show a preview).
    public static let maximumBytes: UInt64 = 1_000_000

    /// Whether a picture of this size needs a thumbnail.
    public static func needsThumbnail(width: Int, height: Int, bytes: UInt64) -> Bool {
        width > maximumWidth || height > maximumHeight || bytes > maximumBytes
    }

    /// The size of the thumbnail of a picture shown at `width` × `height`: within 800 × 600,
    /// its proportions kept, never larger than the picture, never less than one pixel a side.
    public static func thumbnailSize(width: Int, height: Int) -> (width: Int, height: Int) {
        guard width > 0, height > 0 else { return (1, 1) }
        let scale = min(1, Double(maximumWidth) / Double(width), Double(maximumHeight) / Double(height))
        return (max(1, Int((Double(width) * scale).rounded())), max(1, Int((Double(height) * scale).rounded())))
    }

    /// The square a large picture is decoded within, for a thumbnail: as large as the thumbnail's
    /// longer side (the orientation is known only after decoding, and a picture turned sideways
    /// has its long side the other way), or smaller where an eighth, a quarter or a half of the
    /// picture's longer side is between 640 and 800 pixels. JPEG decodes at exactly those scales,
    /// so the decoded picture is the thumbnail, with no second pass to scale it down: a
    /// 6000 × 4000 photo becomes a 750 × 500 thumbnail in about two thirds of the time.
    public static func decodingBox(width: Int, height: Int) -> Int {
        let longest = max(width, height)
        let box = max(maximumWidth, maximumHeight)
        for divisor in [8, 4, 2] {
            let scaled = (longest + divisor - 1) / divisor
            if scaled >= 640 && scaled <= box { return scaled }
        }
        return box
    }

    /// Picture types every client shows: sent as `m.image` even when this system cannot read
    /// them (then without a thumbnail). Any other picture type (HEIC, AVIF, TIFF…) is an
    /// `m.image` only where this system could read it, an `m.file` otherwise, so that no client
    /// shows a broken picture.
    public static let shownEverywhere: Set<String> = ["image/jpeg", "image/png", "image/gif", "image/webp"]
}
