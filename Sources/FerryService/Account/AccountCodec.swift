import FerryAccount
import FerryContract
import FerryCore
import FerryEncryption
import FerryMatrix
import FerrySender
import GLibAdapter

/// The contract's requests as the service's parts take them, and the service's values as the
/// contract's answers (their keys are the contract's: FerryContract).
enum AccountCodec {
    /// The contract's sign-in request as the account takes it: the browser opened through the desktop.
    static func credentials(_ request: SignInRequest) -> Credentials {
        switch request.method {
        case .password(let user, let password):
            return Credentials(homeserver: request.homeserver, method: .password(user: user, password: password))
        case .accessToken(let token): return Credentials(homeserver: request.homeserver, method: .accessToken(token))
        case .browser(let createAccount):
            return Credentials(
                homeserver: request.homeserver,
                method: .browser(open: { uri in try Launcher.open(uri: uri) }, createAccount: createAccount))
        }
    }

    static func verificationSecret(_ secret: DeviceSecret) -> VerificationSecret {
        switch secret {
        case .recoveryKey(let key): return .recoveryKey(key)
        case .passphrase(let passphrase): return .passphrase(passphrase)
        case .either(let text): return .either(text)
        }
    }

    static func report(_ flows: FerryMatrix.LoginFlows) -> FerryContract.LoginFlows {
        FerryContract.LoginFlows(
            homeserver: flows.homeserver, password: flows.password, sso: flows.sso, token: flows.token,
            oauth: flows.oauth != nil, createAccount: flows.oauth?.offersAccountCreation == true,
            accountManagement: flows.oauth?.accountManagementURI)
    }

    /// An emoji verification as its methods answer and EmojiVerificationChanged carries it.
    static func report(_ state: EmojiVerificationState) -> EmojiVerificationReport {
        EmojiVerificationReport(
            state: state.stage.rawValue, id: state.id, deviceID: state.deviceID,
            deviceName: state.deviceName, emoji: state.emoji.map(\.emoji),
            emojiNames: state.emoji.map(\.description),
            decimal: state.emoji.isEmpty ? nil : state.decimals.map(String.init).joined(separator: " "),
            reason: state.reason.isEmpty ? nil : state.reason, verification: state.verification?.rawValue)
    }
}
