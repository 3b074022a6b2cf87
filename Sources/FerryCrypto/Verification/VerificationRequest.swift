import FerryCore
import Foundation

/// `m.key.verification.request` and `m.key.verification.ready` over to-device messages: the
/// framework's handshake before a method starts. Element sends a request first and starts SAS
/// only after a ready, so a device that answers only `start` is never asked.
public struct VerificationRequest: Sendable, Hashable {
    /// The transaction every later message of this verification carries.
    public let transactionID: String
    /// The device that sent it.
    public let fromDevice: String
    /// The methods it offers (ours is `m.sas.v1`).
    public let methods: [String]

    /// Whether the two sides share SAS. A request without it is not cancelled (another device of
    /// the user may take it); the person is told and may decline.
    public var offersSas: Bool { methods.contains(VerificationMessage.sasMethod) }

    /// A request that another device sent, as of `now`; nil for a malformed one, and for one more
    /// than 10 minutes old or 5 minutes ahead of our clock, which the spec says to ignore (a
    /// replayed old request must not pop up a prompt).
    public init?(reading content: JSONValue, now: Date) {
        guard let id = VerificationMessage.transactionID(of: content),
            let device = content["from_device"]?.stringValue, !device.isEmpty,
            let methods = stringList(content["methods"]),
            let timestamp = content["timestamp"]?.intValue
        else { return nil }
        let age = now.timeIntervalSince1970 * 1000 - Double(timestamp)
        guard age <= 10 * 60 * 1000, age >= -5 * 60 * 1000 else { return nil }
        transactionID = id
        fromDevice = device
        self.methods = methods
    }

    /// A ready another device sent to our request; nil for a malformed one.
    public init?(readingReady content: JSONValue) {
        guard let id = VerificationMessage.transactionID(of: content),
            let device = content["from_device"]?.stringValue, !device.isEmpty,
            let methods = stringList(content["methods"])
        else { return nil }
        transactionID = id
        fromDevice = device
        self.methods = methods
    }

    /// Our request, offering SAS, stamped `now` (milliseconds since the epoch).
    public static func request(transactionID: String, fromDevice: String, now: Date) -> VerificationMessage {
        VerificationMessage(
            type: VerificationMessage.request,
            content: [
                "transaction_id": .string(transactionID), "from_device": .string(fromDevice),
                "methods": [.string(VerificationMessage.sasMethod)],
                "timestamp": .int(Int64(now.timeIntervalSince1970 * 1000)),
            ])
    }

    /// Our ready to a request that offers SAS.
    public static func ready(transactionID: String, fromDevice: String) -> VerificationMessage {
        VerificationMessage(
            type: VerificationMessage.ready,
            content: [
                "transaction_id": .string(transactionID), "from_device": .string(fromDevice),
                "methods": [.string(VerificationMessage.sasMethod)],
            ])
    }
}

/// A JSON array of strings, bounded; nil for anything else. Method lists are the other side's,
/// and a list of a million names is not an offer but an attack on our time.
func stringList(_ value: JSONValue?) -> [String]? {
    guard let items = value?.arrayValue, items.count <= 64 else { return nil }
    let strings = items.compactMap(\.stringValue)
    return strings.count == items.count ? strings : nil
}
