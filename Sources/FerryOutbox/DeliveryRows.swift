import FerryCore
import GRDB

/// A `delivery` row.
struct DeliveryRow: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "delivery"
    enum CodingKeys: String, CodingKey {
        case position, destination, state, attempts
        case shareID = "share_id", roomID = "room_id", bytesSent = "bytes_sent", bytesTotal = "bytes_total"
        case eventsSent = "events_sent", eventsTotal = "events_total", errorName = "error_name"
        case errorMessage = "error_message", retryAt = "retry_at", signIn = "sign_in"
    }

    var shareID: String
    var position: Int
    var destination: String
    var roomID: String?
    var state: String
    var bytesSent: Int64
    var bytesTotal: Int64
    var eventsSent: Int
    var eventsTotal: Int
    var errorName: String?
    var errorMessage: String?
    var retryAt: Int64?
    var attempts: Int
    var signIn: Int64?

    init(shareID: String, position: Int, delivery: Delivery) {
        self.shareID = shareID
        self.position = position
        destination = delivery.destination
        roomID = delivery.roomID
        state = delivery.state.rawValue
        bytesSent = Int64(delivery.bytesSent)
        bytesTotal = Int64(delivery.bytesTotal)
        eventsSent = delivery.eventsSent
        eventsTotal = delivery.eventsTotal
        errorName = delivery.failure?.name
        errorMessage = delivery.failure?.message
        retryAt = delivery.retryAt
        attempts = delivery.attempts
        signIn = delivery.signIn
    }

    var delivery: Delivery {
        Delivery(
            destination: destination, roomID: roomID, state: Delivery.State(rawValue: state) ?? .failed,
            bytesSent: UInt64(max(0, bytesSent)), bytesTotal: UInt64(max(0, bytesTotal)),
            eventsSent: eventsSent, eventsTotal: eventsTotal,
            failure: errorName.map { Share.Failure(name: $0, message: errorMessage ?? "") },
            retryAt: retryAt, attempts: attempts, signIn: signIn)
    }

    static func deliveries(of shareID: String, in db: Database) throws -> [Delivery] {
        try DeliveryRow.fetchAll(
            db.cachedStatement(sql: "SELECT * FROM delivery WHERE share_id = ? ORDER BY position"),
            arguments: [shareID]
        ).map(\.delivery)
    }
}

/// One event of a delivery, as stored: what to send and how far it got.
public struct DeliveryStep: Equatable, Sendable, Codable, FetchableRecord, PersistableRecord {
    public static let databaseTableName = "delivery_step"
    enum CodingKeys: String, CodingKey {
        case position, step, item, text
        case shareID = "share_id", transactionID = "transaction_id", contentURI = "content_uri", eventID = "event_id"
    }

    public var shareID: String
    public var position: Int
    public var step: Int
    /// The file's index among the share's items, for a file; nil for a text message.
    public var item: Int?
    /// A text message's body, or a file's caption (nil: the file goes with its name as body).
    public var text: String?
    public var transactionID: String
    public var contentURI: String?
    public var eventID: String?

    public init(shareID: String, position: Int, step: Int, composed: Composition.Step) {
        self.shareID = shareID
        self.position = position
        self.step = step
        switch composed {
        case .text(let words): text = words
        case .file(let index): item = index
        case .captionedFile(let index, let caption):
            item = index
            text = caption
        }
        // Unique per share, destination and step, and the same on every retry of that step.
        transactionID = "ferry.\(shareID).\(position).\(step)"
    }
}
