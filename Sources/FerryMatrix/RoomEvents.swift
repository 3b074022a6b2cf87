import FerryCore
import Foundation
import NIOHTTP1

/// The content of an `m.room.message` event, as Ferry sends them.
public struct MessageContent: Encodable, Sendable, Equatable {
    public struct Info: Encodable, Sendable, Equatable {
        public var mimetype: String?
        public var size: UInt64?
        public var w: Int?
        public var h: Int?
        /// How long a video or a sound plays, in milliseconds.
        public var duration: Int?
        /// A picture's or a video's thumbnail (a video's poster frame): `thumbnail_url` in a plain
        /// room; in an encrypted room its `thumbnail_file` (key, IV, hash) in its place, as for the
        /// file itself.
        public var thumbnailURL: String?
        public var thumbnailFile: JSONValue?
        public var thumbnailInfo: ThumbnailInfo?
        /// `xyz.amorgan.blurhash`: the blurred placeholder Element and the mobile clients show
        /// until the picture loads.
        public var blurhash: String?

        enum CodingKeys: String, CodingKey {
            case mimetype, size, w, h, duration
            case thumbnailURL = "thumbnail_url"
            case thumbnailFile = "thumbnail_file"
            case thumbnailInfo = "thumbnail_info"
            case blurhash = "xyz.amorgan.blurhash"
        }

        public init(mimetype: String?, size: UInt64?, w: Int? = nil, h: Int? = nil) {
            self.mimetype = mimetype
            self.size = size
            self.w = w
            self.h = h
        }
    }

    /// `thumbnail_info`: the thumbnail's own size and type.
    public struct ThumbnailInfo: Encodable, Sendable, Equatable {
        public var w: Int
        public var h: Int
        public var mimetype: String
        public var size: UInt64

        public init(w: Int, h: Int, mimetype: String, size: UInt64) {
            self.w = w
            self.h = h
            self.mimetype = mimetype
            self.size = size
        }
    }

    public var msgtype: String
    public var body: String
    public var url: String?
    /// An encrypted attachment's `file` object (key, iv, hashes, url), in place of `url`.
    public var file: JSONValue?
    public var filename: String?
    public var info: Info?
    /// The transaction id the event is sent under, in Ferry's own namespace: clients ignore it,
    /// and Ferry finds the event by it when the device it was sent from is gone (`RoomEvents.sent`).
    public var transaction: String?

    /// Whom the message mentions: nobody, ever (`m.mentions: {}`). A shared text that contains
    /// `@room` or someone's user id is the sharer's words passed on, not a ping from Ferry.
    public struct Mentions: Encodable, Sendable, Equatable {}
    public var mentions = Mentions()

    /// The content key of `transaction`.
    public static let transactionKey = "io.github.ferryshare.transaction"

    enum CodingKeys: String, CodingKey {
        case msgtype, body, url, filename, info, file
        case mentions = "m.mentions"
        case transaction = "io.github.ferryshare.transaction"
    }

    public init(
        msgtype: String, body: String, url: String? = nil, filename: String? = nil, info: Info? = nil,
        transaction: String? = nil
    ) {
        self.msgtype = msgtype
        self.body = body
        self.url = url
        self.filename = filename
        self.info = info
        self.transaction = transaction
    }
}

/// Sending events. The transaction id makes a repeated request return the first event instead of
/// making a second one, for the same device.
public struct RoomEvents: Sendable {
    let http: MatrixHTTP

    public init(http: MatrixHTTP) { self.http = http }

    /// `PUT /rooms/{roomId}/send/m.room.message/{txnId}`; returns the event id.
    public func send(
        _ content: MessageContent, to roomID: String, transactionID: String
    ) async throws(MatrixError) -> String {
        try await send(content, type: "m.room.message", to: roomID, transactionID: transactionID)
    }

    /// `PUT /rooms/{roomId}/send/{type}/{txnId}` with any content (`m.room.encrypted`'s, made by
    /// the encryption already); returns the event id.
    public func send(
        _ content: some Encodable & Sendable, type: String, to roomID: String,
        transactionID: String
    ) async throws(MatrixError) -> String {
        let path =
            "/_matrix/client/v3/rooms/\(MatrixHTTP.percentEncoded(roomID))/send/\(MatrixHTTP.percentEncoded(type))/"
            + MatrixHTTP.percentEncoded(transactionID)
        return try await http.call(.PUT, path, json: content, as: SentEvent.self).event_id
    }

    struct SentEvent: Decodable { var event_id: String }

    /// The events `sender` sent into the room under any of `transactionIDs` (read from the
    /// content's `io.github.ferryshare.transaction`), by transaction id, looking back from the
    /// newest no further than `since` (microseconds) and at most `pages` pages of 100 of the
    /// sender's messages: where a server no longer knows the device a transaction id was used
    /// on, this is how Ferry learns that an event went out before.
    public func sent(
        in roomID: String, by sender: String, transactionIDs: Set<String>, since: Int64,
        pages: Int = 10
    ) async throws(MatrixError) -> [String: String] {
        struct Tag: Decodable {
            var transaction: String?
            enum CodingKeys: String, CodingKey { case transaction = "io.github.ferryshare.transaction" }
            // Content is whatever the sender put there: an odd field never fails the page.
            init(from decoder: Decoder) {
                transaction = try? decoder.container(keyedBy: CodingKeys.self).decodeIfPresent(
                    String.self, forKey: .transaction)
            }
        }
        struct Event: Decodable {
            var event_id: String?
            var sender: String?
            var origin_server_ts: LenientNumber?
            var content: Tag?
        }
        struct Page: Decodable {
            var chunk: [Event]?
            var end: String?
        }
        let path = "/_matrix/client/v3/rooms/\(MatrixHTTP.percentEncoded(roomID))/messages"
        // Encrypted events carry their tag outside the ciphertext (a keyed hash of the id: see
        // EncryptingHomeserver.sent).
        let filter = #"{"senders":["# + Self.jsonString(sender) + #"],"types":["m.room.message","m.room.encrypted"]}"#
        var found: [String: String] = [:]
        var from: String?
        for _ in 0..<max(1, pages) {
            var query = [("dir", "b"), ("limit", "100"), ("filter", filter)]
            if let from { query.append(("from", from)) }
            let page = try await http.call(.GET, path, query: query, as: Page.self)
            let chunk = page.chunk ?? []
            var older = false
            for event in chunk {
                if let time = event.origin_server_ts?.value.flatMap(Rooms.microseconds(timestamp:)), time < since {
                    older = true
                }
                guard event.sender == sender, let id = event.event_id, let transaction = event.content?.transaction,
                    transactionIDs.contains(transaction), found[transaction] == nil
                else { continue }
                found[transaction] = id
            }
            guard found.count < transactionIDs.count, !older, !chunk.isEmpty, let end = page.end, end != from else {
                break
            }
            from = end
        }
        return found
    }

    /// One Megolm event as the room holds it: enough to read its message index.
    public struct SentMegolm: Sendable, Equatable {
        public var sessionID: String
        public var ciphertext: String
    }

    /// The newest `m.room.encrypted` events `sender` sent into the room (at most `limit`, newest
    /// first), each with its session id and ciphertext. What the server answers is only a hint:
    /// the caller checks each message's signature before it believes an index.
    public func sentMegolm(in roomID: String, by sender: String, limit: Int) async throws(MatrixError) -> [SentMegolm] {
        struct Event: Decodable {
            var sender: String?
            var type: String?
            // Content is whatever the sender put there: read leniently, an odd field never fails the page.
            var content: LenientJSON?
        }
        struct Page: Decodable { var chunk: [Event]? }
        let path = "/_matrix/client/v3/rooms/\(MatrixHTTP.percentEncoded(roomID))/messages"
        let filter = #"{"senders":["# + Self.jsonString(sender) + #"],"types":["m.room.encrypted"]}"#
        let query = [("dir", "b"), ("limit", "\(max(1, min(limit, 1000)))"), ("filter", filter)]
        let page = try await http.call(.GET, path, query: query, as: Page.self)
        return (page.chunk ?? []).compactMap { event in
            guard event.sender == sender, event.type == "m.room.encrypted", let content = event.content?.value,
                content["algorithm"]?.stringValue == "m.megolm.v1.aes-sha2",
                let session = content["session_id"]?.stringValue, let ciphertext = content["ciphertext"]?.stringValue
            else { return nil }
            return SentMegolm(sessionID: session, ciphertext: ciphertext)
        }
    }

    /// A string as a JSON string literal (for the filter, whose user id comes from the server).
    static func jsonString(_ value: String) -> String {
        let data = (try? JSONEncoder().encode(value)) ?? Data("\"\"".utf8)
        return String(decoding: data, as: UTF8.self)
    }
}
