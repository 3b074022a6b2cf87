import FerryCore
import GLibAdapter

/// A share as it travels on D-Bus (`GetShare`, `ListShares`, `ShareChanged`): an a{sv} whose
/// keys are documented in the Share1 interface XML. Empty values are left out.
public enum ShareCodec {
    /// The share as `GetShare` answers it.
    public static func encode(_ share: Share) -> [String: Variant] {
        var dict: [String: Variant] = [
            "id": .string(share.id),
            "state": .string(share.state.rawValue),
            "action": .string(share.intent.action.rawValue),
            "content-type": .string(share.intent.contentType),
            "items": .dictionaries(share.intent.items.map(encode)),
            "destinations": .strings(share.intent.destinations),
            "source": .string(share.intent.source.rawValue),
            "created": .int64(share.created),
            "updated": .int64(share.updated),
        ]
        if !share.intent.suggestedDestinations.isEmpty {
            dict["suggested-destinations"] = .strings(share.intent.suggestedDestinations)
        }
        if let subject = share.intent.subject { dict["subject"] = .string(subject) }
        if let message = share.intent.message { dict["message"] = .string(message) }
        if let failure = share.failure {
            dict["error-name"] = .string(failure.name)
            dict["error-message"] = .string(failure.message)
        }
        if !share.deliveries.isEmpty {
            dict["deliveries"] = .dictionaries(
                share.deliveries.enumerated().map { position, delivery in
                    var encoded = encode(delivery)
                    if let account = share.account(at: position) { encoded["account"] = .string(account) }
                    return encoded
                })
        }
        if let account = share.account { dict["account"] = .string(account) }
        if !share.destinationAccounts.isEmpty { dict["destination-accounts"] = .strings(share.destinationAccounts) }
        return dict
    }

    static func encode(_ delivery: Delivery) -> [String: Variant] {
        var dict: [String: Variant] = [
            "destination": .string(delivery.destination),
            "state": .string(delivery.state.rawValue),
            "bytes-sent": .uint64(delivery.bytesSent),
            "bytes-total": .uint64(delivery.bytesTotal),
            "events-sent": .uint32(UInt32(clamping: delivery.eventsSent)),
            "events-total": .uint32(UInt32(clamping: delivery.eventsTotal)),
        ]
        if let roomID = delivery.roomID { dict["room-id"] = .string(roomID) }
        if let failure = delivery.failure {
            dict["error-name"] = .string(failure.name)
            dict["error-message"] = .string(failure.message)
        }
        if delivery.state == .retrying, let retryAt = delivery.retryAt { dict["retry-at"] = .int64(retryAt) }
        return dict
    }

    /// One of a share's "deliveries"; missing keys read as nothing sent yet.
    public static func decode(delivery dict: [String: Variant]) -> Delivery {
        Delivery(
            destination: dict["destination"]?.stringValue ?? "", roomID: dict["room-id"]?.stringValue,
            state: dict["state"]?.stringValue.flatMap(Delivery.State.init(rawValue:)) ?? .queued,
            bytesSent: dict["bytes-sent"]?.uint64Value ?? 0, bytesTotal: dict["bytes-total"]?.uint64Value ?? 0,
            eventsSent: Int(dict["events-sent"]?.uint32Value ?? 0),
            eventsTotal: Int(dict["events-total"]?.uint32Value ?? 0),
            failure: dict["error-name"]?.stringValue.map {
                Share.Failure(name: $0, message: dict["error-message"]?.stringValue ?? "")
            },
            retryAt: dict["retry-at"]?.int64Value)
    }

    static func encode(_ item: ShareItem) -> [String: Variant] {
        var dict: [String: Variant] = [
            "kind": .string(item.kind.rawValue),
            "name": .string(item.name),
            "content-type": .string(item.contentType),
            "size": .uint64(item.size),
        ]
        if let uri = item.uri { dict["uri"] = .string(uri) }
        if let text = item.text { dict["text"] = .string(text) }
        return dict
    }

    /// Reads a share back (the command line and the UI are clients); nil when a required key is missing.
    public static func decode(_ dict: [String: Variant]) -> Share? {
        guard let id = dict["id"]?.stringValue,
            let state = dict["state"]?.stringValue.flatMap(ShareState.init(rawValue:)),
            let itemDicts = dict["items"]?.dictionariesValue, !itemDicts.isEmpty
        else { return nil }
        let items = itemDicts.map { item in
            ShareItem(
                kind: item["kind"]?.stringValue.flatMap(ShareItem.Kind.init(rawValue:)) ?? .file,
                name: item["name"]?.stringValue ?? "",
                contentType: item["content-type"]?.stringValue ?? "application/octet-stream",
                size: item["size"]?.uint64Value ?? 0,
                uri: item["uri"]?.stringValue, text: item["text"]?.stringValue)
        }
        let intent = ShareIntent(
            items: items, subject: dict["subject"]?.stringValue,
            message: dict["message"]?.stringValue,
            destinations: dict["destinations"]?.stringsValue ?? [],
            source: dict["source"]?.stringValue.flatMap(IntakeSource.init(rawValue:)) ?? .share,
            suggestedDestinations: dict["suggested-destinations"]?.stringsValue ?? [])
        let failure = dict["error-name"]?.stringValue.map {
            Share.Failure(name: $0, message: dict["error-message"]?.stringValue ?? "")
        }
        return Share(
            id: id, intent: intent, state: state, created: dict["created"]?.int64Value ?? 0,
            updated: dict["updated"]?.int64Value ?? 0, failure: failure,
            deliveries: (dict["deliveries"]?.dictionariesValue ?? []).map { decode(delivery: $0) },
            account: dict["account"]?.stringValue,
            destinationAccounts: dict["destination-accounts"]?.stringsValue ?? [])
    }
}
