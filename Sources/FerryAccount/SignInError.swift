import FerryCore
import FerryOutbox

/// Why a sign-in did not happen, in values. The account's own type; the service's contract turns
/// it into `ShareError` (its D-Bus name and the sentence a person reads) where it answers.
public enum SignInError: Error, Sendable, Equatable {
    /// The homeserver was not found, or did not answer as a Matrix homeserver (`reason` is the
    /// system's words, or nil for a server that answered as something else).
    case unreachable(homeserver: String, reason: String?)
    /// The homeserver does not offer this way of signing in.
    case unsupported(homeserver: String, method: ShareError.LoginMethod)
    /// The homeserver refused what was given: a user name and password, an access token, the
    /// browser's login token.
    case refused(Refused)
    /// A browser sign-in already waits for its redirect.
    case inProgress
    /// No browser could be opened (`reason` is the system's).
    case noBrowser(reason: String)
    /// The person did not finish the browser sign-in within `minutes`.
    case browserTimedOut(minutes: Int)
    /// The server signed the person in, but neither the Secret Service nor a private file could
    /// keep the token.
    case tokenNotKept
    /// As many accounts as Ferry holds are signed in already.
    case tooManyAccounts(limit: Int)
    /// The outbox could not record the sign-in.
    case storage(OutboxError)
    /// The homeserver's authorization server (OAuth 2.0 API) cannot be used: what it says about
    /// itself, or how it answered, is not safe or not complete (`reason`).
    case unusableSignInService(homeserver: String, reason: String)
    /// The person did not allow the sign-in on the server's page.
    case declined
    /// Anything else that stopped it, in the words of what failed (the loopback listener).
    case failed(reason: String)

    public enum Refused: Sendable, Equatable {
        case password, accessToken, browser
    }
}

extension ShareError {
    /// The contract's error for a failed sign-in: the D-Bus name and sentence clients know.
    public init(_ error: SignInError) {
        switch error {
        case .unreachable(let homeserver, let reason):
            // TRANSLATORS: completes "The homeserver {server} cannot be reached: {reason}."
            self = .homeserverUnreachable(homeserver, reason: reason ?? tr("it does not answer as a Matrix homeserver"))
        case .unsupported(let homeserver, let method): self = .unsupportedLogin(homeserver, method: method)
        case .refused(.password): self = .signInFailed(tr("The homeserver did not accept this user name and password."))
        case .refused(.accessToken): self = .signInFailed(tr("The homeserver does not know this access token."))
        case .refused(.browser):
            self = .signInFailed(tr("The browser sign-in was not accepted by the homeserver; try again."))
        case .inProgress: self = .signInInProgress
        case .noBrowser(let reason):
            self = .signInFailed(
                // TRANSLATORS: {error} is the system's reason, often in English.
                tr("No browser could be opened for signing in: {error}.", ["error": reason]))
        case .browserTimedOut(let minutes):
            self = .signInFailed(
                trn(
                    "The sign-in in the browser was not finished within {count} minute.",
                    "The sign-in in the browser was not finished within {count} minutes.", minutes))
        case .tokenNotKept:
            self = .signInFailed(
                tr(
                    "Signed in, but the sign-in could not be kept: neither the Secret Service nor a private file could store it."
                ))
        case .tooManyAccounts(let limit):
            self = .signInFailed(
                trn(
                    "Ferry holds {count} account at a time; sign one out first.",
                    "Ferry holds {count} accounts at a time; sign one out first.", limit))
        case .storage(let error): self = .storageFailed(.signIn, reason: error.reason)
        case .unusableSignInService(let homeserver, let reason):
            self = .signInFailed(
                tr(
                    // TRANSLATORS: {server} is a homeserver's address, {reason} why its sign-in service is not used.
                    "The sign-in service of {server} cannot be used: {reason}.",
                    ["server": homeserver, "reason": reason]))
        case .declined: self = .signInFailed(tr("The sign-in was not allowed in the browser."))
        case .failed(let reason): self = .signInFailed(reason)
        }
    }
}
