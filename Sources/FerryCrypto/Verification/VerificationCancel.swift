import FerryCore

/// Why a verification ended early: what `m.key.verification.cancel` carries. Thrown by every step
/// that refuses what the other side sent, so that the refusal and the message that tells them
/// are the same value.
public struct VerificationCancel: Error, Sendable, Hashable {
    /// The cancel code. A struct rather than an enum, so that a code some other client invented
    /// is still read and shown instead of refused.
    public struct Code: RawRepresentable, Sendable, Hashable {
        /// The code as it travels (`m.user`, `m.mismatched_sas`, …).
        public let rawValue: String
        /// A code from its text; unknown codes are kept as they are.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The user cancelled, or declined the request.
        public static let user = Code(rawValue: "m.user")
        /// The verification took too long (10 minutes in all, or 10 minutes without a message).
        public static let timeout = Code(rawValue: "m.timeout")
        /// A message for a transaction this device does not know.
        public static let unknownTransaction = Code(rawValue: "m.unknown_transaction")
        /// The devices share no method: key agreement, hash, MAC or SAS method.
        public static let unknownMethod = Code(rawValue: "m.unknown_method")
        /// A message out of order.
        public static let unexpectedMessage = Code(rawValue: "m.unexpected_message")
        /// A MAC did not hold: a key was not the one the other side has (or the MAC was changed).
        public static let keyMismatch = Code(rawValue: "m.key_mismatch")
        /// The message came from another user than the one being verified.
        public static let userMismatch = Code(rawValue: "m.user_mismatch")
        /// A message that is not well formed.
        public static let invalidMessage = Code(rawValue: "m.invalid_message")
        /// Another device of the user accepted the request.
        public static let accepted = Code(rawValue: "m.accepted")
        /// The accepting side's key is not the one it committed to: a man in the middle, or a bug.
        public static let mismatchedCommitment = Code(rawValue: "m.mismatched_commitment")
        /// The user said the emoji or numbers differ.
        public static let mismatchedSas = Code(rawValue: "m.mismatched_sas")
    }

    /// The code, which is what a client acts on.
    public let code: Code
    /// Words for a person or a log; never key material.
    public let reason: String

    /// A cancel with `code` and words for it.
    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    /// The `m.key.verification.cancel` that tells the other device.
    public func message(transactionID: String) -> VerificationMessage {
        VerificationMessage(
            type: VerificationMessage.cancel,
            content: [
                "transaction_id": .string(transactionID), "code": .string(code.rawValue),
                "reason": .string(reason),
            ])
    }

    /// A cancel the other device sent; nil when it has no code. The reason is cut to 255
    /// characters: it goes into a log and before a person, and the other side chose it.
    public init?(reading content: JSONValue) {
        guard let code = content["code"]?.stringValue, !code.isEmpty else { return nil }
        self.code = Code(rawValue: String(code.prefix(255)))
        reason = String((content["reason"]?.stringValue ?? "").prefix(255))
    }
}
