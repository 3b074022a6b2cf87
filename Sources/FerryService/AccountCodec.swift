import FerryAccount
import FerryCore
import FerryEncryption
import FerryMatrix
import FerrySender
import GLibAdapter

/// The sign-in and destination values as they travel on D-Bus (keys documented in the Share1 XML).
enum AccountCodec {
    static func credentials(_ dict: [String: Variant]) throws(ShareError) -> Credentials {
        let types = ["homeserver": "s", "user": "s", "password": "s", "access-token": "s", "sso": "b"]
        for (key, value) in dict {
            if let expected = types[key], value.typeString != expected {
                throw .invalidArgument("\u{201C}\(key)\u{201D} must be of type \u{201C}\(expected)\u{201D}, not \u{201C}\(value.typeString)\u{201D}.")
            }
        }
        guard let homeserver = dict["homeserver"]?.stringValue, !homeserver.trimmingWhitespace().isEmpty else {
            throw .invalidArgument("Say which homeserver to sign in to (\u{201C}homeserver\u{201D}).")
        }
        if let token = dict["access-token"]?.stringValue {
            guard !token.isEmpty else { throw .invalidArgument("The access token is empty.") }
            return Credentials(homeserver: homeserver, method: .accessToken(token))
        }
        if dict["sso"]?.boolValue == true {
            return Credentials(homeserver: homeserver, method: .browser(open: { uri in try Launcher.open(uri: uri) }))
        }
        guard let user = dict["user"]?.stringValue, !user.isEmpty, let password = dict["password"]?.stringValue else {
            throw .invalidArgument("Give \u{201C}user\u{201D} and \u{201C}password\u{201D}, or \u{201C}access-token\u{201D}.")
        }
        return Credentials(homeserver: homeserver, method: .password(user: user, password: password))
    }

    /// VerifyDevice's secret: exactly one of "recovery-key", "passphrase" and "key-or-passphrase",
    /// a string.
    static func verificationSecret(_ dict: [String: Variant]) throws(ShareError) -> VerificationSecret {
        let kinds = ["recovery-key", "passphrase", "key-or-passphrase"]
        for (key, value) in dict where kinds.contains(key) && value.typeString != "s" {
            throw .invalidArgument("\u{201C}\(key)\u{201D} must be of type \u{201C}s\u{201D}, not \u{201C}\(value.typeString)\u{201D}.")
        }
        let given = kinds.compactMap { kind in dict[kind]?.stringValue.map { (kind, $0) } }
        guard given.count == 1, let (kind, text) = given.first else {
            throw .invalidArgument("Give one of \u{201C}recovery-key\u{201D}, \u{201C}passphrase\u{201D} and \u{201C}key-or-passphrase\u{201D}.")
        }
        guard !text.trimmingWhitespace().isEmpty else { throw .invalidArgument("Enter your recovery key or passphrase.") }
        // Recovery keys are 48 characters and passphrases are typed by people: more is not either,
        // and decoding base58 takes time that grows with the square of its length.
        guard text.utf8.count <= 1024 else { throw .invalidArgument("That is too long to be a recovery key or passphrase.") }
        switch kind {
        case "recovery-key": return .recoveryKey(text)
        case "passphrase": return .passphrase(text)
        default: return .either(text)
        }
    }

    static func encode(_ flows: LoginFlows) -> [String: Variant] {
        ["homeserver": .string(flows.homeserver), "password": .bool(flows.password), "sso": .bool(flows.sso),
         "token": .bool(flows.token)]
    }

    static func encode(_ status: ServiceStatus) -> [String: Variant] {
        var shares: [String: Variant] = [:]
        for state in ShareState.allCases { shares[state.rawValue] = .uint32(UInt32(clamping: status.shares[state] ?? 0)) }
        return [
            "signed-in": .bool(status.signedIn),
            "user-id": .string(status.userID ?? ""),
            "homeserver": .string(status.homeserver ?? ""),
            "online": .bool(status.online),
            "secret-storage": .string(status.secretStorage ?? ""),
            "device-id": .string(status.deviceID ?? ""),
            "device-verification": .string(status.verification?.rawValue ?? ""),
            "shares": .dictionary(shares),
        ]
    }

    static func encode(_ entry: DestinationEntry) -> [String: Variant] {
        var dict: [String: Variant] = [
            "id": .string(entry.id), "kind": .string(entry.kind.rawValue), "name": .string(entry.name),
            "members": .uint32(UInt32(clamping: entry.members)), "encrypted": .bool(entry.encrypted),
            "recent": .bool(entry.recent),
        ]
        if let alias = entry.alias { dict["alias"] = .string(alias) }
        if let userID = entry.userID { dict["user-id"] = .string(userID) }
        if let lastActivity = entry.lastActivity { dict["last-activity"] = .int64(lastActivity) }
        return dict
    }

    /// An emoji verification as its methods answer and EmojiVerificationChanged carries it.
    static func encode(_ state: EmojiVerificationState) -> [String: Variant] {
        var dict: [String: Variant] = [
            "id": .string(state.id), "state": .string(state.stage.rawValue),
            "device-id": .string(state.deviceID), "device-name": .string(state.deviceName),
        ]
        if !state.emoji.isEmpty {
            dict["emoji"] = .strings(state.emoji.map(\.emoji))
            dict["emoji-names"] = .strings(state.emoji.map(\.description))
            dict["decimal"] = .string(state.decimals.map(String.init).joined(separator: " "))
        }
        if !state.reason.isEmpty { dict["reason"] = .string(state.reason) }
        if let verification = state.verification { dict["verification"] = .string(verification.rawValue) }
        return dict
    }
}
