import Foundation
import NIOHTTP1

/// The content of an `m.room.message` event, as Ferry sends them.
public struct MessageContent: Encodable, Sendable, Equatable {
    public struct Info: Encodable, Sendable, Equatable {
        public var mimetype: String?
        public var size: UInt64?
        public var w: Int?
        public var h: Int?
        public init(mimetype: String?, size: UInt64?, w: Int? = nil, h: Int? = nil) {
            self.mimetype = mimetype
            self.size = size
            self.w = w
            self.h = h
        }
    }

    public var msgtype: String
    public var body: String
    public var url: String?
    public var filename: String?
    public var info: Info?

    public init(msgtype: String, body: String, url: String? = nil, filename: String? = nil, info: Info? = nil) {
        self.msgtype = msgtype
        self.body = body
        self.url = url
        self.filename = filename
        self.info = info
    }
}

/// Sending events. The transaction id makes a repeated request return the first event instead of
/// making a second one, for the same device.
public struct Events: Sendable {
    let http: MatrixHTTP

    public init(http: MatrixHTTP) { self.http = http }

    /// `PUT /rooms/{roomId}/send/m.room.message/{txnId}`; returns the event id.
    public func send(_ content: MessageContent, to roomID: String, transactionID: String) async throws(MatrixError) -> String {
        struct Answer: Decodable { var event_id: String }
        let path = "/_matrix/client/v3/rooms/\(MatrixHTTP.percentEncoded(roomID))/send/m.room.message/"
            + MatrixHTTP.percentEncoded(transactionID)
        return try await http.call(.PUT, path, json: content, as: Answer.self).event_id
    }
}
