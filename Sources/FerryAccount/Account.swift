import FerryCore
import FerryMatrix
import FerryOutbox
import Foundation
import Logging

/// The signed-in Matrix account: who, where, with which device, and its token. Survives restarts
/// (the outbox keeps who and where, the vault keeps the token).
// @unchecked Sendable: every `var` below is read and written only with `lock` held; the rest is
// immutable and Sendable. (An NSCondition rather than a value box: readers wait on it for the token.)
public final class Account: @unchecked Sendable {
    /// Guards everything below; waited on while a stored sign-in's token is being read.
    private let lock = NSCondition()
    private let outbox: Outbox
    private let vault: TokenVault
    private let logger: Logger
    private var stored: StoredAccount?
    private var session: Session?
    private var pendingBrowserSignIn: SSORedirect?
    /// The token of a stored sign-in is being read from its storage, in the background.
    private var tokenPending = false
    private var tokenWaiters: [CheckedContinuation<Void, Never>] = []
    private var signInLost: (@Sendable () -> Void)?
    private var signInLostUnheard = false

    /// Reads who was signed in from the outbox, and their token from its storage in the
    /// background: a Secret Service lookup opens a session with the keyring daemon (a key exchange,
    /// docs/PERFORMANCE.md), and a cold start must not wait for it before it can take a share. Until the
    /// token is read the account counts as signed in, as it was when the service last ran.
    public init(outbox: Outbox, vault: TokenVault, logger: Logger) {
        self.outbox = outbox
        self.vault = vault
        self.logger = logger
        // Unread, nobody is signed in for this run: shares wait for a sign-in, which rewrites it.
        stored = logger.attempt("reading the stored sign-in") { try outbox.account() }
        guard let stored, stored.signedIn else { return }
        tokenPending = true
        let thread = Thread { [self] in self.readToken(of: stored) }
        thread.name = "ferry-token"
        thread.start()
    }

    private func readToken(of stored: StoredAccount) {
        let token = vault.token(userID: stored.userID, storage: stored.secretStorage.flatMap(TokenVault.Storage.init))
        let (waiters, lost): ([CheckedContinuation<Void, Never>], (@Sendable () -> Void)?) = lock.withLock {
            tokenPending = false
            // A sign-in that finished meanwhile is newer than what was stored.
            if session == nil, let token {
                session = Session(
                    userID: stored.userID, homeserver: stored.homeserver, deviceID: stored.deviceID,
                    accessToken: token, signIn: stored.signIn)
            }
            lock.broadcast()
            defer { tokenWaiters = [] }
            if token == nil, signInLost == nil { signInLostUnheard = true }
            return (tokenWaiters, token == nil ? signInLost : nil)
        }
        if token == nil { logger.warning("the sign-in of \(stored.userID) is gone from its storage; sign in again") }
        waiters.forEach { $0.resume() }
        lost?()
    }

    /// Told when the stored sign-in turns out to have no token any more: shares routed as if
    /// signed in must wait for a sign-in again. Told at once if that was found already.
    public func whenSignInLost(_ handler: @escaping @Sendable () -> Void) {
        let unheard = lock.withLock {
            signInLost = handler
            defer { signInLostUnheard = false }
            return signInLostUnheard
        }
        if unheard { handler() }
    }

    /// Returns once the stored sign-in's token has been read (at once when there is none).
    public func tokenRead() async {
        await withCheckedContinuation { continuation in
            let ready = lock.withLock {
                if tokenPending { tokenWaiters.append(continuation) }
                return !tokenPending
            }
            if ready { continuation.resume() }
        }
    }

    public var isSignedIn: Bool { lock.withLock { session != nil || tokenPending } }
    /// Who is signed in, without waiting for a stored token to be read (a share accepted at a
    /// cold start is that person's, as `isSignedIn` counts them signed in).
    public var signedInUser: String? { lock.withLock { session?.userID ?? (tokenPending ? stored?.userID : nil) } }
    /// The session, once the stored token has been read (this waits for it).
    public var current: Session? {
        lock.withLock {
            waitForToken(); return session
        }
    }
    /// The session if the stored token has been read, without waiting.
    public var currentIfRead: Session? { lock.withLock { tokenPending ? nil : session } }
    public var secretStorage: String? {
        lock.withLock {
            waitForToken(); return session == nil ? nil : stored?.secretStorage
        }
    }

    /// Call with the lock held.
    private func waitForToken() {
        while tokenPending { lock.wait() }
    }

    /// Signs in with the credentials of `SignIn(a{sv})`. A sign-in it replaces (another person,
    /// or another device) is ended at the server once the new one is kept: its token is not left
    /// valid and forgotten.
    public func signIn(_ credentials: Credentials) async throws(SignInError) -> Session {
        await tokenRead()
        let previous = lock.withLock { self.session }
        let homeserver: String
        do {
            homeserver = try await FerryMatrix.SignIn.discover(credentials.homeserver)
        } catch {
            throw .unreachable(homeserver: credentials.homeserver, reason: error.message)
        }
        let http = MatrixHTTP(baseURL: homeserver)
        let session: Session
        do {
            switch credentials.method {
            case .password(let user, let password):
                let flows = try await FerryMatrix.SignIn.flows(http)
                guard flows.password else {
                    throw SignInError.unsupported(homeserver: credentials.homeserver, method: .password)
                }
                session = try await FerryMatrix.SignIn.password(
                    http, user: user, password: password,
                    deviceID: deviceToKeep(user: user, homeserver: homeserver))
            case .accessToken(let token):
                session = try await FerryMatrix.SignIn.accessToken(http, token: token)
            case .browser(let open):
                let flows = try await FerryMatrix.SignIn.flows(http)
                guard flows.sso else {
                    throw SignInError.unsupported(homeserver: credentials.homeserver, method: .browser)
                }
                let token = try await browserLoginToken(http, open: open)
                session = try await FerryMatrix.SignIn.loginToken(
                    http, token: token, deviceID: deviceToKeep(user: nil, homeserver: homeserver))
            }
        } catch let error as SignInError {
            throw error
        } catch let error as MatrixError {
            throw Self.signInError(error, homeserver: credentials.homeserver, method: credentials.method)
        } catch {
            throw .failed(reason: "\(error)")
        }
        let kept = try remember(session)
        logger.info(
            "signed in",
            metadata: [
                "user": "\(session.userID)", "homeserver": "\(homeserver)",
                "device": "\(session.deviceID)",
            ])
        if let previous { await retire(previous, replacedBy: kept) }
        return kept
    }

    /// Ends a sign-in that a new one replaced. The same device signed in again needs nothing: the
    /// server ended its old token itself (a login with an existing device id does). Another device
    /// or person is signed out at the server, and another person's token leaves its storage.
    private func retire(_ old: Session, replacedBy new: Session) async {
        guard old.accessToken != new.accessToken else { return }
        if old.userID != new.userID {
            vault.remove(userID: old.userID)
            // One account at a time: the one replaced is kept as signed out, its device with it.
            _ = logger.attempt("saving the replaced sign-in as signed out") {
                guard var replaced = try outbox.account(userID: old.userID) else { return }
                replaced.signedIn = false
                replaced.secretStorage = nil
                try outbox.save(account: replaced)
            }
        }
        guard old.userID != new.userID || old.deviceID != new.deviceID || old.homeserver != new.homeserver else {
            return
        }
        do {
            try await FerryMatrix.SignIn.logout(MatrixHTTP(baseURL: old.homeserver, accessToken: old.accessToken))
            logger.info(
                "ended the previous sign-in at its server",
                metadata: ["user": "\(old.userID)", "device": "\(old.deviceID)"])
        } catch {
            logger.warning(
                "the previous sign-in could not be ended at its server",
                metadata: [
                    "user": "\(old.userID)", "device": "\(old.deviceID)", "error": "\(error)",
                ])
        }
    }

    /// Signs out: the token is forgotten (and ended on the server when `remote`). The service
    /// deletes the device's encryption keys too, so the next sign-in is a new device.
    public func signOut(remote: Bool) async {
        await tokenRead()
        guard let session = lock.withLock({ self.session }) else { return }
        if remote {
            // Signed out here whatever the server says: a token it still holds is the server's to expire.
            do {
                let http = MatrixHTTP(baseURL: session.homeserver, accessToken: session.accessToken)
                try await FerryMatrix.SignIn.logout(http)
            } catch {
                logger.notice("the homeserver did not end the session", metadata: ["error": "\(error)"])
            }
        }
        forget(session)
    }

    /// The server no longer takes the token (401 M_UNKNOWN_TOKEN): forget it, keep the device
    /// (and its encryption keys) for the next sign-in.
    public func invalidate(token: String) {
        guard let session = lock.withLock({ self.session }), session.accessToken == token else { return }
        logger.notice("the homeserver ended this sign-in; sign in again", metadata: ["user": "\(session.userID)"])
        forget(session)
    }

    private func forget(_ session: Session) {
        vault.remove(userID: session.userID)
        lock.withLock {
            self.session = nil
            stored?.signedIn = false
            stored?.secretStorage = nil
            // Unsaved, the next start reads a sign-in without its token (removed above): signed out then too.
            if let stored { _ = logger.attempt("saving the sign-out") { try outbox.save(account: stored) } }
        }
    }

    private func remember(_ signedIn: Session) throws(SignInError) -> Session {
        var session = signedIn
        guard let storage = vault.store(session.accessToken, userID: session.userID, homeserver: session.homeserver)
        else {
            throw .tokenNotKept
        }
        let account: StoredAccount
        do throws(OutboxError) {
            account = try outbox.save(
                newSignIn: StoredAccount(
                    userID: session.userID, homeserver: session.homeserver,
                    deviceID: session.deviceID, signedIn: true,
                    secretStorage: storage.rawValue))
        } catch {
            throw .storage(error)
        }
        session.signIn = account.signIn
        lock.withLock {
            stored = account
            self.session = session
        }
        return session
    }

    /// SSO: a one-time loopback address for the homeserver to send the browser back to, the
    /// browser opened at the server's sign-in page, and a wait of up to five minutes for the person.
    private func browserLoginToken(_ http: MatrixHTTP, open: @Sendable (String) throws -> Void) async throws -> String {
        let redirect = try await SSORedirect.listen()
        let busy: Bool = lock.withLock {
            guard pendingBrowserSignIn == nil else { return true }
            pendingBrowserSignIn = redirect
            return false
        }
        if busy {
            redirect.cancel()
            throw SignInError.inProgress
        }
        defer { lock.withLock { pendingBrowserSignIn = nil } }
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

    /// The device to sign in with: the last one, when it is the same person (nil: whoever the
    /// browser signs in) on the same server and its encryption keys are still kept. A device's
    /// keys never change under the same id (other clients would take it for an impostor), so
    /// after a sign-out, which deletes them, the next sign-in is a new device.
    private func deviceToKeep(user: String?, homeserver: String) -> String? {
        let candidate: StoredAccount? = lock.withLock {
            guard let stored, stored.homeserver == homeserver, !stored.deviceID.isEmpty else { return nil }
            guard let user else { return stored }
            let local = stored.userID.dropFirst().split(separator: ":").first.map(String.init)
            return stored.userID == user || local == user || "@" + user == stored.userID ? stored : nil
        }
        guard let candidate else { return nil }
        // Unread, a new device: never a kept id whose keys might be gone.
        let kept = logger.attempt("reading whether encryption records are kept") {
            try outbox.cryptoRecords(of: candidate.userID).hasCryptoRecords()
        }
        return kept == true ? candidate.deviceID : nil
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
