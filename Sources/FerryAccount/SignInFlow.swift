import FerryCore
import FerryMatrix
import Logging
import Synchronization

/// One sign-in at the homeserver, from the credentials of `SignIn(a{sv})` to a session: the
/// server found (`.well-known`), the way asked for checked against what it offers, and the
/// login made. Keeping the session is `Accounts`'.
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
            case .browser(let open):
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
    /// browser opened at the server's sign-in page, and a wait of up to five minutes for the
    /// person. One at a time, whichever account it is for.
    private func browserLoginToken(
        _ http: MatrixHTTP, open: @Sendable (String) throws -> Void, slot: BrowserSignInSlot
    ) async throws -> String {
        let redirect = try await SSORedirect.listen()
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
            try open(FerryMatrix.SignIn.ssoURL(http, redirect: redirect.url))
        } catch {
            redirect.cancel()
            throw SignInError.noBrowser(reason: "\(error)")
        }
        logger.info("waiting for the browser sign-in", metadata: ["redirect": "\(redirect.url)"])
        let minutes = 5
        guard let token = await redirect.loginToken(within: Int64(minutes) * 60) else {
            throw SignInError.browserTimedOut(minutes: minutes)
        }
        return token
    }

    /// A server that does not answer as a Matrix homeserver is not a wrong password.
    static func signInError(_ error: MatrixError, homeserver: String, method: Credentials.Method) -> SignInError {
        if error.kind == .transport || error.kind == .malformed || error.status == 404 {
            return .unreachable(homeserver: homeserver, reason: error.kind == .transport ? error.message : nil)
        }
        switch method {
        case .password: return .refused(.password)
        case .accessToken: return .refused(.accessToken)
        case .browser: return .refused(.browser)
        }
    }
}

/// The browser sign-in waiting for its redirect, if any: one at a time, for any account.
final class BrowserSignInSlot: Sendable {
    let pending = Mutex<SSORedirect?>(nil)
}

/// What `SignIn(a{sv})` was given.
public struct Credentials: Sendable {
    public enum Method: Sendable {
        case password(user: String, password: String)
        case accessToken(String)
        /// Single sign-on: `open` shows the homeserver's sign-in page in the browser.
        case browser(open: @Sendable (String) throws -> Void)
    }
    public var homeserver: String
    public var method: Method

    public init(homeserver: String, method: Method) {
        self.homeserver = homeserver
        self.method = method
    }
}
