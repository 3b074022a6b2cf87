import FerryCore
import FerryMatrix
import FerryOutbox
import Foundation
import Logging

/// The signed-in Matrix account: who, where, with which device, and its token. Survives restarts
/// (the outbox keeps who and where, the vault keeps the token).
public final class Account: @unchecked Sendable {
    private let lock = NSLock()
    private let outbox: Outbox
    private let vault: TokenVault
    private let logger: Logger
    private var stored: StoredAccount?
    private var session: Session?

    public init(outbox: Outbox, vault: TokenVault, logger: Logger) {
        self.outbox = outbox
        self.vault = vault
        self.logger = logger
        stored = try? outbox.account()
        if let stored, stored.signedIn {
            if let token = vault.token(userID: stored.userID, storage: stored.secretStorage.flatMap(TokenVault.Storage.init)) {
                session = Session(userID: stored.userID, homeserver: stored.homeserver, deviceID: stored.deviceID,
                                  accessToken: token)
            } else {
                logger.warning("the sign-in of \(stored.userID) is gone from its storage; sign in again")
            }
        }
    }

    public var isSignedIn: Bool { lock.withLock { session != nil } }
    public var current: Session? { lock.withLock { session } }
    public var secretStorage: String? { lock.withLock { session == nil ? nil : stored?.secretStorage } }

    /// Signs in with the credentials of `SignIn(a{sv})`.
    public func signIn(_ credentials: Credentials) async throws(ShareError) -> Session {
        let homeserver: String
        do {
            homeserver = try await FerryMatrix.SignIn.discover(credentials.homeserver)
        } catch {
            throw .homeserverUnreachable(credentials.homeserver, reason: error.message)
        }
        let http = MatrixHTTP(baseURL: homeserver)
        let session: Session
        do {
            switch credentials.method {
            case .password(let user, let password):
                let flows = try await FerryMatrix.SignIn.flows(http)
                guard flows.password else { throw ShareError.unsupportedLogin(credentials.homeserver, method: "a password") }
                session = try await FerryMatrix.SignIn.password(http, user: user, password: password,
                                                                deviceID: deviceToKeep(user: user, homeserver: homeserver))
            case .accessToken(let token):
                session = try await FerryMatrix.SignIn.accessToken(http, token: token)
            case .loginToken(let token):
                session = try await FerryMatrix.SignIn.loginToken(http, token: token,
                                                                  deviceID: lock.withLock { stored?.homeserver == homeserver ? stored?.deviceID : nil })
            }
        } catch let error as ShareError {
            throw error
        } catch let error as MatrixError {
            throw Self.signInError(error, homeserver: credentials.homeserver, method: credentials.method)
        } catch {
            throw .signInFailed("\(error)")
        }
        try remember(session)
        logger.info("signed in", metadata: ["user": "\(session.userID)", "homeserver": "\(homeserver)",
                                            "device": "\(session.deviceID)"])
        return session
    }

    /// Signs out: the token is forgotten (and ended on the server when `remote`); the device id
    /// is kept for the next sign-in.
    public func signOut(remote: Bool) async {
        guard let session = lock.withLock({ self.session }) else { return }
        if remote {
            try? await FerryMatrix.SignIn.logout(MatrixHTTP(baseURL: session.homeserver, accessToken: session.accessToken))
        }
        forget(session)
    }

    /// The server no longer takes the token (401 M_UNKNOWN_TOKEN): forget it, keep the device.
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
            if let stored { try? outbox.save(account: stored) }
        }
    }

    private func remember(_ session: Session) throws(ShareError) {
        guard let storage = vault.store(session.accessToken, userID: session.userID, homeserver: session.homeserver) else {
            throw .signInFailed("Signed in, but the sign-in could not be kept: neither the Secret Service nor a private file could store it.")
        }
        let account = StoredAccount(userID: session.userID, homeserver: session.homeserver, deviceID: session.deviceID,
                                    signedIn: true, secretStorage: storage.rawValue)
        do {
            try outbox.save(account: account)
        } catch {
            throw .stagingFailed("the outbox", reason: "the account could not be saved")
        }
        lock.withLock {
            stored = account
            self.session = session
        }
    }

    /// The device to sign in with: the last one, when it is the same person on the same server.
    private func deviceToKeep(user: String, homeserver: String) -> String? {
        lock.withLock {
            guard let stored, stored.homeserver == homeserver, !stored.deviceID.isEmpty else { return nil }
            let local = stored.userID.dropFirst().split(separator: ":").first.map(String.init)
            return stored.userID == user || local == user || "@" + user == stored.userID ? stored.deviceID : nil
        }
    }

    static func signInError(_ error: MatrixError, homeserver: String, method: Credentials.Method) -> ShareError {
        if error.kind == .transport || error.kind == .malformed || error.status == 404 {
            return .homeserverUnreachable(homeserver, reason: error.kind == .transport ? error.message
                                            : "it does not answer as a Matrix homeserver")
        }
        switch method {
        case .password: return .signInFailed("The homeserver did not accept this user name and password.")
        case .accessToken: return .signInFailed("The homeserver does not know this access token.")
        case .loginToken: return .signInFailed("The browser sign-in was not accepted by the homeserver; try again.")
        }
    }
}

/// What `SignIn(a{sv})` was given.
public struct Credentials: Sendable {
    public enum Method: Sendable {
        case password(user: String, password: String)
        case accessToken(String)
        case loginToken(String)
    }
    public var homeserver: String
    public var method: Method

    public init(homeserver: String, method: Method) {
        self.homeserver = homeserver
        self.method = method
    }
}
