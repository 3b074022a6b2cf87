import FerryCore

/// One to-device message of a verification: its event type and content. The protocol layer makes
/// and reads these; sending them (`/sendToDevice/{type}/{txnId}` to one device) is the caller's.
public struct VerificationMessage: Sendable, Hashable {
    /// The event type, one of the constants below.
    public let type: String
    /// The content, with `transaction_id` in it (to-device verification has no room to relate to).
    public let content: JSONValue

    /// A message of `type` with `content`, as it travels.
    public init(type: String, content: JSONValue) {
        self.type = type
        self.content = content
    }

    /// A device asks another of its owner's (or someone's) devices to verify.
    public static let request = "m.key.verification.request"
    /// The asked device is ready, with the methods it speaks.
    public static let ready = "m.key.verification.ready"
    /// One side starts SAS, offering its algorithms.
    public static let start = "m.key.verification.start"
    /// The other side picks from them and commits to its key.
    public static let accept = "m.key.verification.accept"
    /// Each side's ephemeral public key.
    public static let key = "m.key.verification.key"
    /// Each side's MACs over the keys it vouches for, once its person saw the emoji match.
    public static let mac = "m.key.verification.mac"
    /// The verification is over, for the side that sends it.
    public static let done = "m.key.verification.done"
    /// Either side gives up, with a code and a reason.
    public static let cancel = "m.key.verification.cancel"

    /// The verification method this module speaks, for `methods` in request and ready.
    public static let sasMethod = "m.sas.v1"

    /// The `transaction_id` of a verification message's content, when it has a usable one: what a
    /// caller routes a message by (and answers `m.unknown_transaction` to when it knows none).
    /// Bounded, because it is the other side's string and goes into every HKDF info and log line.
    public static func transactionID(of content: JSONValue) -> String? {
        guard let id = content["transaction_id"]?.stringValue, !id.isEmpty, id.utf8.count <= 255 else { return nil }
        return id
    }

    /// `m.key.verification.done`: sent once the other side's keys are verified and our MAC is out.
    public static func done(transactionID: String) -> VerificationMessage {
        VerificationMessage(type: done, content: ["transaction_id": .string(transactionID)])
    }
}
