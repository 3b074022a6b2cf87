import FerryCore
import FerryMatrix
import Logging
import Synchronization

/// One sign-in at the homeserver, from the credentials of `SignIn(a{sv})` to a session: the
/// server found (`.well-known`), the way asked for checked against what it offers, and the
/// login made. Keeping the session is `Accounts`'.
///
/// The browser sign-in is the OAuth 2.0 API where the homeserver offers it (Matrix 1.15), and
/// legacy SSO (`m.login.sso`) where it offers only that.
struct SignInFlow {
    let credentials: Credentials
    let logger: Logger
    /// The device to sign in with for a person (nil: whoever the browser signs in) on a server.
    let deviceToKeep: (_ user: String?, _ homeserver: String) -> String?

    func run(browser: BrowserSignInSlot) async throws(SignInError) -> Session {
        let homeserver: String
        do {
            homeserver = try await FerryMatrix.SignIn.discover(credentials.homeserver)
        } catch {
            throw .unreachable(homeserver: credentials.homeserver, reason: error.message)
        }
        let http = MatrixHTTP(baseURL: homeserver)
        do {
            switch credentials.method {
            case .password(let user, let password):
                let flows = try await FerryMatrix.SignIn.flows(http)
                guard flows.password else {
                    throw SignInError.unsupported(homeserver: credentials.homeserver, method: .password)
                }
                return try await FerryMatrix.SignIn.password(
                    http, user: user, password: password, deviceID: deviceToKeep(user, homeserver))
            case .accessToken(let token):
                return try await FerryMatrix.SignIn.accessToken(http, token: token)
            case .browser(let open, let createAccount):
                if let metadata = try await FerryMatrix.SignIn.authMetadata(http) {
                    return try await oauth(
                        http, metadata: metadata, open: open, createAccount: createAccount, slot: browser)
                }
                let flows = try await FerryMatrix.SignIn.flows(http)
                guard flows.sso else {
                    throw SignInError.unsupported(homeserver: credentials.homeserver, method: .browser)
                }
                let token = try await browserLoginToken(http, open: open, slot: browser)
                return try await FerryMatrix.SignIn.loginToken(
                    http, token: token, deviceID: deviceToKeep(nil, homeserver))
            }
        } catch let error as SignInError {
            throw error
        } catch let error as MatrixError {
            throw Self.signInError(error, homeserver: credentials.homeserver, method: credentials.method)
        } catch {
            throw .failed(reason: "\(error)")
        }
    }

    /// SSO: a one-time loopback address for the homeserver to send the browser back to, the
    /// browser opened at the server's sign-in page, and a wait for the person.
    private func browserLoginToken(
        _ http: MatrixHTTP, open: @Sendable (String) throws -> Void, slot: BrowserSignInSlot
    ) async throws -> String {
        let redirect = try await LoopbackRedirect.listen()
        let answer = try await inBrowser(redirect, slot: slot) {
            try open(FerryMatrix.SignIn.ssoURL(http, redirect: redirect.url))
        }
        guard let token = answer["loginToken"] else { throw SignInError.refused(.browser) }
        return token
    }

    /// The OAuth 2.0 API: Ferry registered at the authorization server (anew for each sign-in, as
    /// Matrix 1.15 requires; the sign-in keeps its client id for renewing and revoking), the
    /// browser opened at its authorization page for a code bound to a PKCE verifier, the code
    /// exchanged, and the tokens' person and device asked from the homeserver.
    private func oauth(
        _ http: MatrixHTTP, metadata: AuthMetadata, open: @Sendable (String) throws -> Void, createAccount: Bool,
        slot: BrowserSignInSlot
    ) async throws -> Session {
        // Asked before registering: a sign-in refused for another under way leaves no registration.
        guard slot.pending.withLock({ $0 == nil }) else { throw SignInError.inProgress }
        let client = try await OAuthClient.register(metadata)
        let state = Authorization.newState()
        let redirect = try await LoopbackRedirect.listen(
            path: client.redirectPath, state: state, answers: ["code", "error"])
        let authorization = Authorization(
            metadata: metadata, client: client, deviceID: deviceToKeep(nil, http.baseURL), port: redirect.port,
            state: state)
        let answer = try await inBrowser(redirect, slot: slot) {
            try open(authorization.url(createAccount: createAccount))
        }
        if let error = answer["error"] {
            logger.notice("the browser sign-in ended with an error", metadata: ["error": "\(error)"])
            // Only "no" from the person is declining; anything else is the service's failure.
            guard error == "access_denied" else {
                throw SignInError.unusableSignInService(
                    homeserver: credentials.homeserver,
                    reason: Authorization.describe(error: error, description: answer["error_description"]))
            }
            throw SignInError.declined
        }
        let pair = try await authorization.tokens(for: answer["code"] ?? "", issuer: answer["iss"])
        let session: Session
        do throws(MatrixError) {
            session = try await FerryMatrix.SignIn.session(http, oauth: pair, deviceID: authorization.deviceID)
        } catch {
            // Issued, but not used: ended at once rather than left valid and forgotten.
            try? await pair.oauth?.revoke(pair)
            throw error
        }
        logger.info("signed in through the OAuth 2.0 API", metadata: ["issuer": "\(metadata.issuer)"])
        return session
    }

    /// Opens the browser (`open`) and waits up to five minutes for it to come back to `redirect`:
    /// the answer's query. One browser sign-in at a time, whichever account it is for.
    private func inBrowser(
        _ redirect: LoopbackRedirect, slot: BrowserSignInSlot, open: () throws -> Void
    ) async throws -> [String: String] {
        let busy: Bool = slot.pending.withLock { pending in
            guard pending == nil else { return true }
            pending = redirect
            return false
        }
        if busy {
            redirect.cancel()
            throw SignInError.inProgress
        }
        defer { slot.pending.withLock { $0 = nil } }
        do {
            try open()
        } catch {
            redirect.cancel()
            throw SignInError.noBrowser(reason: "\(error)")
        }
        logger.info("waiting for the browser sign-in", metadata: ["port": "\(redirect.port)"])
        let minutes = 5
        guard let answer = await redirect.answer(within: Int64(minutes) * 60) else {
            throw SignInError.browserTimedOut(minutes: minutes)
        }
        return answer
    }

    /// A server that does not answer as a Matrix homeserver is not a wrong password.
    static func signInError(_ error: MatrixError, homeserver: String, method: Credentials.Method) -> SignInError {
        if error.errcode == AuthMetadata.refusalErrcode {
            return .unusableSignInService(homeserver: homeserver, reason: error.message)
        }
        if error.kind == .transport || error.kind == .malformed || error.status == 404 {
            return .unreachable(homeserver: homeserver, reason: error.kind == .transport ? error.message : nil)
        }
        // A server error or a rate limit (the homeserver's or its sign-in service's): try later.
        if error.isTransient { return .unreachable(homeserver: homeserver, reason: error.description) }
        switch method {
        case .password: return .refused(.password)
        case .accessToken: return .refused(.accessToken)
        case .browser: return .refused(.browser)
        }
    }
}

/// The browser sign-in waiting for its redirect, if any: one at a time, for any account.
final class BrowserSignInSlot: Sendable {
    let pending = Mutex<LoopbackRedirect?>(nil)
}

/// What `SignIn(a{sv})` was given.
public struct Credentials: Sendable {
    public enum Method: Sendable {
        case password(user: String, password: String)
        case accessToken(String)
        /// In the browser: `open` shows the server's sign-in page; `createAccount` opens it at
        /// "create an account" where the server offers that (OAuth's `prompt=create`).
        case browser(open: @Sendable (String) throws -> Void, createAccount: Bool = false)
    }
    public var homeserver: String
    public var method: Method

    public init(homeserver: String, method: Method) {
        self.homeserver = homeserver
        self.method = method
    }
}
