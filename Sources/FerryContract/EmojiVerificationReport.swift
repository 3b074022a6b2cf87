import FerryCore
import GLibAdapter

/// An emoji verification as its methods answer it and `EmojiVerificationChanged` carries it.
public struct EmojiVerificationReport: Equatable, Sendable {
    /// Where it stands: "waiting", "comparing", "confirmed", "done" or "cancelled".
    public var state: String
    public var id: String
    /// The other device (empty while every other device is asked).
    public var deviceID: String
    public var deviceName: String
    /// The seven emoji to compare, and their names (in English, translated where shown).
    public var emoji: [String]
    public var emojiNames: [String]
    /// The same, as three numbers separated by spaces; nil until there is something to compare.
    public var decimal: String?
    /// Why it was cancelled, in the person's language.
    public var reason: String?
    /// The device's verification once done ("verified", …); nil until the other device signed.
    public var verification: String?

    public init(
        state: String, id: String, deviceID: String, deviceName: String, emoji: [String] = [],
        emojiNames: [String] = [], decimal: String? = nil, reason: String? = nil, verification: String? = nil
    ) {
        self.state = state
        self.id = id
        self.deviceID = deviceID
        self.deviceName = deviceName
        self.emoji = emoji
        self.emojiNames = emojiNames
        self.decimal = decimal
        self.reason = reason
        self.verification = verification
    }

    /// Whether it is over, one way or the other.
    public var hasEnded: Bool { state == "done" || state == "cancelled" }

    public var dictionary: [String: Variant] {
        var dict: [String: Variant] = [
            "id": .string(id), "state": .string(state), "device-id": .string(deviceID),
            "device-name": .string(deviceName),
        ]
        if !emoji.isEmpty {
            dict["emoji"] = .strings(emoji)
            dict["emoji-names"] = .strings(emojiNames)
        }
        if let decimal { dict["decimal"] = .string(decimal) }
        if let reason, !reason.isEmpty { dict["reason"] = .string(reason) }
        if let verification { dict["verification"] = .string(verification) }
        return dict
    }

    /// Reads one back; nil for the empty dictionary GetEmojiVerification answers when there is none.
    public init?(_ dict: [String: Variant]) {
        guard let id = dict["id"]?.stringValue else { return nil }
        self.id = id
        state = dict["state"]?.stringValue ?? ""
        deviceID = dict["device-id"]?.stringValue ?? ""
        deviceName = dict["device-name"]?.stringValue ?? ""
        emoji = dict["emoji"]?.stringsValue ?? []
        emojiNames = dict["emoji-names"]?.stringsValue ?? []
        decimal = dict["decimal"]?.stringValue
        reason = dict["reason"]?.stringValue
        verification = dict["verification"]?.stringValue
    }
}
