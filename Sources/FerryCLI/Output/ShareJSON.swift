import FerryCore
import Foundation

/// The stable JSON form of shares (`--json`), documented in docs/CONTRACT.md: keys are never
/// removed or renamed, absent values are `null`.
enum ShareJSON {
    static func object(_ share: Share) -> String { encode(JSONShare(share)) }
    static func array(_ shares: [Share]) -> String { encode(shares.map(JSONShare.init)) }

    private static func encode<T: Encodable>(_ value: T) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(value) else { return "null" }
        return JSONText.compactingEmptyArrays(String(decoding: data, as: UTF8.self))
    }
}

private struct JSONShare: Encodable {
    let share: Share
    init(_ share: Share) { self.share = share }

    enum Keys: String, CodingKey {
        case id, state, action, items, subject, message, destinations, source, error, deliveries, account
        case contentType = "content_type", createdAt = "created_at", updatedAt = "updated_at"
        case suggestedDestinations = "suggested_destinations", destinationAccounts = "destination_accounts"
    }

    func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(share.id, forKey: .id)
        try container.encode(share.state.rawValue, forKey: .state)
        try container.encode(share.intent.action.rawValue, forKey: .action)
        try container.encode(share.intent.contentType, forKey: .contentType)
        try container.encode(share.intent.items.map(JSONItem.init), forKey: .items)
        try container.encode(share.intent.subject, forKey: .subject)
        try container.encode(share.intent.message, forKey: .message)
        try container.encode(share.intent.destinations, forKey: .destinations)
        try container.encode(share.intent.suggestedDestinations, forKey: .suggestedDestinations)
        try container.encode(share.intent.source.rawValue, forKey: .source)
        try container.encode(Timestamp.iso8601(microseconds: share.created), forKey: .createdAt)
        try container.encode(Timestamp.iso8601(microseconds: share.updated), forKey: .updatedAt)
        try container.encode(failure: share.failure, forKey: .error)
        try container.encode(
            share.deliveries.enumerated().map { JSONDelivery($1, account: share.account(at: $0)) }, forKey: .deliveries)
        try container.encode(share.account, forKey: .account)
        try container.encode(share.destinationAccounts, forKey: .destinationAccounts)
    }
}

/// One destination's progress, as GetShare's "deliveries" carries it.
private struct JSONDelivery: Encodable {
    let delivery: Delivery
    let account: String?
    init(_ delivery: Delivery, account: String?) {
        self.delivery = delivery
        self.account = account
    }

    enum Keys: String, CodingKey {
        case destination, state, error, account
        case roomID = "room_id", bytesSent = "bytes_sent", bytesTotal = "bytes_total"
        case eventsSent = "events_sent", eventsTotal = "events_total", retryAt = "retry_at"
    }

    func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(delivery.destination, forKey: .destination)
        try container.encode(delivery.roomID, forKey: .roomID)
        try container.encode(delivery.state.rawValue, forKey: .state)
        try container.encode(delivery.bytesSent, forKey: .bytesSent)
        try container.encode(delivery.bytesTotal, forKey: .bytesTotal)
        try container.encode(delivery.eventsSent, forKey: .eventsSent)
        try container.encode(delivery.eventsTotal, forKey: .eventsTotal)
        try container.encode(delivery.retryAt.map(Timestamp.iso8601(microseconds:)), forKey: .retryAt)
        try container.encode(failure: delivery.failure, forKey: .error)
        try container.encode(account, forKey: .account)
    }
}

extension KeyedEncodingContainer {
    /// `{"name", "message"}`, or null: the same shape for a share's error and a delivery's.
    fileprivate mutating func encode(failure: Share.Failure?, forKey key: Key) throws {
        if let failure {
            try encode(["name": failure.name, "message": failure.message], forKey: key)
        } else {
            try encodeNil(forKey: key)
        }
    }
}

private struct JSONItem: Encodable {
    let item: ShareItem
    init(_ item: ShareItem) { self.item = item }

    enum Keys: String, CodingKey {
        case kind, name, size, uri, text
        case contentType = "content_type"
    }

    func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(item.kind.rawValue, forKey: .kind)
        try container.encode(item.name, forKey: .name)
        try container.encode(item.contentType, forKey: .contentType)
        try container.encode(item.size, forKey: .size)
        try container.encodeIfPresent(item.uri, forKey: .uri)
        try container.encodeIfPresent(item.text, forKey: .text)
    }
}
