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
                // TRANSLATORS: an error for a program calling Ferry over D-Bus; {key} is the name of an argument, {type} and {given} are D-Bus types (such as "s").
                throw .invalidArgument(tr("“{key}” must be of type “{type}”, not “{given}”.",
                                          ["key": key, "type": expected, "given": value.typeString]))
            }
        }
        guard let homeserver = dict["homeserver"]?.stringValue, !homeserver.trimmingWhitespace().isEmpty else {
            // TRANSLATORS: {key} is the name of a D-Bus argument ("homeserver"), as it is.
            throw .invalidArgument(tr("Say which homeserver to sign in to (“{key}”).", ["key": "homeserver"]))
        }
        if let token = dict["access-token"]?.stringValue {
            guard !token.isEmpty else { throw .invalidArgument(tr("The access token is empty.")) }
            return Credentials(homeserver: homeserver, method: .accessToken(token))
        }
        if dict["sso"]?.boolValue == true {
            return Credentials(homeserver: homeserver, method: .browser(open: { uri in try Launcher.open(uri: uri) }))
        }
        guard let user = dict["user"]?.stringValue, !user.isEmpty, let password = dict["password"]?.stringValue else {
            // TRANSLATORS: {user}, {password} and {token} are names of D-Bus arguments ("user", "password", "access-token"), as they are.
            throw .invalidArgument(tr("Give “{user}” and “{password}”, or “{token}”.",
                                      ["user": "user", "password": "password", "token": "access-token"]))
        }
        return Credentials(homeserver: homeserver, method: .password(user: user, password: password))
    }

    /// VerifyDevice's secret: exactly one of "recovery-key", "passphrase" and "key-or-passphrase",
    /// a string.
    static func verificationSecret(_ dict: [String: Variant]) throws(ShareError) -> VerificationSecret {
        let kinds = ["recovery-key", "passphrase", "key-or-passphrase"]
        for (key, value) in dict where kinds.contains(key) && value.typeString != "s" {
            // TRANSLATORS: an error for a program calling Ferry over D-Bus; {key} is the name of an argument, {type} and {given} are D-Bus types (such as "s").
            throw .invalidArgument(tr("“{key}” must be of type “{type}”, not “{given}”.", ["key": key, "type": "s", "given": value.typeString]))
        }
        let given = kinds.compactMap { kind in dict[kind]?.stringValue.map { (kind, $0) } }
        guard given.count == 1, let (kind, text) = given.first else {
            // TRANSLATORS: {key}, {passphrase} and {either} are names of D-Bus arguments ("recovery-key", "passphrase", "key-or-passphrase"), as they are.
            throw .invalidArgument(tr("Give one of “{key}”, “{passphrase}” and “{either}”.",
                                      ["key": "recovery-key", "passphrase": "passphrase", "either": "key-or-passphrase"]))
        }
        guard !text.trimmingWhitespace().isEmpty else { throw .invalidArgument(tr("Enter your recovery key or passphrase.")) }
        // Recovery keys are 48 characters and passphrases are typed by people: more is not either,
        // and decoding base58 takes time that grows with the square of its length.
        guard text.utf8.count <= 1024 else { throw .invalidArgument(tr("That is too long to be a recovery key or passphrase.")) }
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
