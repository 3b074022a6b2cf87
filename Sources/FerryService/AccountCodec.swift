import FerryAccount
import FerryContract
import FerryCore
import FerryEncryption
import FerryMatrix
import FerrySender
import GLibAdapter

/// The sign-in and destination values as they travel on D-Bus (keys documented in the Share1 XML),
/// and the contract's requests as the service's parts take them.
enum AccountCodec {
    /// The contract's sign-in request as the account takes it: the browser opened through the desktop.
    static func credentials(_ request: SignInRequest) -> Credentials {
        switch request.method {
        case .password(let user, let password):
            return Credentials(homeserver: request.homeserver, method: .password(user: user, password: password))
        case .accessToken(let token): return Credentials(homeserver: request.homeserver, method: .accessToken(token))
        case .browser:
            return Credentials(homeserver: request.homeserver, method: .browser(open: { uri in try Launcher.open(uri: uri) }))
        }
    }

    static func verificationSecret(_ secret: DeviceSecret) -> VerificationSecret {
        switch secret {
        case .recoveryKey(let key): return .recoveryKey(key)
        case .passphrase(let passphrase): return .passphrase(passphrase)
        case .either(let text): return .either(text)
        }
    }

    static func encode(_ flows: FerryMatrix.LoginFlows) -> [String: Variant] {
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
