import FerryCore
import FerryMatrix
import FerryOutbox
import Foundation
import Logging

/// One signed-in Matrix account: who, where, with which device, and its token. Survives restarts
/// (the outbox keeps who and where, the vault keeps the token). `Accounts` holds every one.
// @unchecked Sendable: every `var` below is read and written only with `lock` held; the rest is
// immutable and Sendable. (An NSCondition rather than a value box: readers wait on it for the token.)
public final class Account: @unchecked Sendable {
    public let userID: String
    /// Guards everything below; waited on while a stored sign-in's token is being read.
    private let lock = NSCondition()
    private let outbox: Outbox
    private let vault: TokenVault
    private let logger: Logger
    private var stored: StoredAccount
    private var session: Session?
    /// The token of a stored sign-in is being read from its storage, in the background.
    private var tokenPending = false
    private var tokenWaiters: [CheckedContinuation<Void, Never>] = []
    private var signInLost: (@Sendable () -> Void)?
    private var signInLostUnheard = false

    /// An account signed in when the service last ran. Its token is read from its storage in the
    /// background: a Secret Service lookup opens a session with the keyring daemon (a key
    /// exchange, docs/PERFORMANCE.md), and a cold start must not wait for it before it can take a
    /// share. Until the token is read the account counts as signed in, as it was.
    init(stored: StoredAccount, outbox: Outbox, vault: TokenVault, logger: Logger) {
        userID = stored.userID
        self.stored = stored
        self.outbox = outbox
        self.vault = vault
        self.logger = logger
        tokenPending = true
        let thread = Thread { [self] in self.readToken(of: stored) }
        thread.name = "ferry-token"
        thread.start()
    }

    /// An account signed in just now.
    init(signedIn session: Session, stored: StoredAccount, outbox: Outbox, vault: TokenVault, logger: Logger) {
        userID = session.userID
        self.stored = stored
        self.session = session
        self.outbox = outbox
        self.vault = vault
        self.logger = logger
        keepsRenewals(of: session)
    }

    private func readToken(of stored: StoredAccount) {
        let kept = vault.token(userID: stored.userID, storage: stored.secretStorage.flatMap(TokenVault.Storage.init))
        let token = kept.flatMap(Tokens.fromKept)
        let (waiters, lost): ([CheckedContinuation<Void, Never>], (@Sendable () -> Void)?) = lock.withLock {
            tokenPending = false
            // A sign-in that finished meanwhile is newer than what was stored.
            if session == nil, let token {
                let read = Session(
                    userID: stored.userID, homeserver: stored.homeserver, deviceID: stored.deviceID,
                    tokens: Tokens(token), signIn: stored.signIn)
                session = read
                keepsRenewals(of: read)
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

    /// Each renewed pair of `session`'s tokens is kept where its sign-in is, before it is used
    /// (Tokens): a restart then starts from the newest pair. Not for a sign-in that ended or was
    /// replaced meanwhile (that would put a secret back after a sign-out removed it); with the
    /// lock held, so that a sign-out waits for a keeping under way.
    private func keepsRenewals(of session: Session) {
        let tokens = session.tokens
        tokens.whenRenewed { [weak self, vault, logger] pair in
            guard let self else { return false }
            return lock.withLock {
                guard self.session?.tokens === tokens else { return false }
                guard let storage = vault.store(Tokens.kept(pair), userID: userID, homeserver: session.homeserver)
                else {
                    logger.warning("the renewed sign-in could not be kept; it is renewed again later")
                    return false
                }
                if stored.secretStorage != storage.rawValue {
                    stored.secretStorage = storage.rawValue
                    _ = logger.attempt("saving where the sign-in is kept") { try outbox.save(account: stored) }
                }
                return true
            }
        }
    }

    /// Told when the stored sign-in turns out to have no token any more: shares routed as if
    /// signed in must wait for a sign-in again. Told at once if that was found already.
    func whenSignInLost(_ handler: @escaping @Sendable () -> Void) {
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

    /// Signed in, or its stored token not read yet (a share accepted at a cold start is this
    /// person's, as it was when the service last ran).
    public var isSignedIn: Bool { lock.withLock { session != nil || tokenPending } }
    /// The session, once the stored token has been read (this waits for it).
    public var current: Session? {
        lock.withLock {
            waitForToken(); return session
        }
    }
    /// The session if the stored token has been read, without waiting.
    public var currentIfRead: Session? { lock.withLock { tokenPending ? nil : session } }
    /// When this account signed in last, across accounts (StoredAccount.signIn): the highest is
    /// the one a call that names no account speaks as.
    var signInNumber: Int64 { lock.withLock { session?.signIn ?? stored.signIn } }
    public var secretStorage: String? {
        lock.withLock {
            waitForToken(); return session == nil ? nil : stored.secretStorage
        }
    }
    /// The device it signed in with last (its keys may still be kept: `Accounts.deviceToKeep`).
    var storedAccount: StoredAccount { lock.withLock { stored } }

    /// Call with the lock held.
    private func waitForToken() {
        while tokenPending { lock.wait() }
    }

    /// Signed in again (the same person): the new session replaces the old, which is returned to
    /// be ended at its server.
    func signedInAgain(_ new: Session, stored: StoredAccount) -> Session? {
        defer { keepsRenewals(of: new) }
        return lock.withLock {
            let old = session
            self.stored = stored
            session = new
            return old
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
                try await FerryMatrix.SignIn.end(session)
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
        lock.withLock {
            // A sign-in that replaced this one meanwhile keeps its token.
            guard self.session?.tokens === session.tokens else { return }
            // Under the lock, so that a renewal being kept (keepsRenewals) cannot put it back.
            vault.remove(userID: session.userID)
            self.session = nil
            stored.signedIn = false
            stored.secretStorage = nil
            // Unsaved, the next start reads a sign-in without its token (removed above): signed out then too.
            _ = logger.attempt("saving the sign-out") { try outbox.save(account: stored) }
        }
    }
}
