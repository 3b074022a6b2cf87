import FerryCore
import FerryMatrix
import FerryOutbox
import Foundation
import Logging
import Synchronization

/// Every signed-in account, each a session of its own (work and personal, on one homeserver or
/// several): signing in adds one (or refreshes it), signing out ends one and leaves the others.
/// A call that names no account speaks as the one signed in last (`latest`).
public final class Accounts: Sendable {
    /// How many accounts may be signed in at once.
    public static let limit = 8

    private let outbox: Outbox
    private let vault: TokenVault
    /// The other secrets kept per account in files without a Secret Service (the encryption key).
    private let otherVaults: [TokenVault]
    private let logger: Logger
    /// Every account signed in during this run or the last, signed out ones included (they keep
    /// their object: a sign-in again reuses it).
    private let known: Mutex<[Account]>
    private let browser = BrowserSignInSlot()
    private let signInLost = Mutex<(@Sendable (_ userID: String) -> Void)?>(nil)

    /// Reads who was signed in from the outbox (without GRDB: this is on the cold path), and each
    /// token from its storage in the background (`Account`).
    public init(outbox: Outbox, vault: TokenVault, otherVaults: [TokenVault] = [], logger: Logger) {
        self.outbox = outbox
        self.vault = vault
        self.otherVaults = otherVaults
        self.logger = logger
        // Unread, nobody is signed in for this run: shares wait for a sign-in, which rewrites it.
        let stored = logger.attempt("reading the stored sign-ins") { try outbox.signedInAccounts() } ?? []
        known = Mutex(
            stored.prefix(Self.limit).map { Account(stored: $0, outbox: outbox, vault: vault, logger: logger) })
    }

    /// The accounts signed in (or whose stored token is still being read), the last signed in first.
    public var signedIn: [Account] {
        known.withLock { $0 }.filter(\.isSignedIn).sorted { $0.signInNumber > $1.signInNumber }
    }

    /// The account a call that names none speaks as: the one signed in last.
    public var latest: Account? { signedIn.first }

    /// The signed-in account of `userID`, if it is signed in.
    public func account(_ userID: String) -> Account? {
        known.withLock { $0.first { $0.userID == userID } }.flatMap { $0.isSignedIn ? $0 : nil }
    }

    /// The account a call speaks as: `userID`'s when it names one (nil when that one is not
    /// signed in), else the one signed in last.
    public func speaking(as userID: String?) -> Account? {
        guard let userID else { return latest }
        return account(userID)
    }

    /// Returns once every stored sign-in's token has been read.
    public func tokenRead() async {
        for account in known.withLock({ $0 }) { await account.tokenRead() }
    }

    /// Told, with the user id, when a stored sign-in turns out to have no token any more.
    public func whenSignInLost(_ handler: @escaping @Sendable (_ userID: String) -> Void) {
        signInLost.withLock { $0 = handler }
        for account in known.withLock({ $0 }) {
            let user = account.userID
            account.whenSignInLost { handler(user) }
        }
    }

    /// The server no longer takes `token`: the account holding it is signed out here.
    public func invalidate(token: String) {
        for account in signedIn where account.currentIfRead?.accessToken == token { account.invalidate(token: token) }
    }

    /// Signs in with the credentials of `SignIn(a{sv})`: a new account, or the same person again
    /// (a sign-in it replaces, on another device, is ended at the server once the new one is kept).
    public func signIn(_ credentials: Credentials) async throws(SignInError) -> Session {
        await tokenRead()
        let flow = SignInFlow(credentials: credentials, logger: logger) { [self] user, homeserver in
            deviceToKeep(user: user, homeserver: homeserver)
        }
        let session = try await flow.run(browser: browser)
        // Decided and kept in one step under the list's lock, so that two sign-ins at the same
        // moment (the dialog and the command line) can neither make two of one person nor pass
        // the limit together. (Keeping the token may ask the Secret Service: sign-ins are rare.)
        let outcome: Result<(Account, Session, replaced: Session?), SignInError>? = known.withLock { known in
            let existing = known.first { $0.userID == session.userID }
            if existing?.isSignedIn != true, known.filter(\.isSignedIn).count >= Self.limit { return nil }
            if existing == nil { handOverSingleAccountFiles(before: session.userID) }
            let kept: Session
            let stored: StoredAccount
            do throws(SignInError) { (kept, stored) = try remember(session) } catch { return .failure(error) }
            if let existing { return .success((existing, kept, existing.signedInAgain(kept, stored: stored))) }
            let account = Account(signedIn: kept, stored: stored, outbox: outbox, vault: vault, logger: logger)
            known.append(account)
            return .success((account, kept, nil))
        }
        guard let outcome else {
            // Not kept: the new token is ended at once rather than left valid and forgotten.
            await end(session, why: "more accounts than Ferry holds")
            throw .tooManyAccounts(limit: Self.limit)
        }
        let account: Account, kept: Session, replaced: Session?
        switch outcome {
        case .success(let made): (account, kept, replaced) = made
        case .failure(let error):
            // Signed in at the server but not kept here: ended there too, not left valid and forgotten.
            await end(session, why: "the sign-in could not be kept")
            throw error
        }
        logger.info(
            "signed in",
            metadata: [
                "user": "\(kept.userID)", "homeserver": "\(kept.homeserver)", "device": "\(kept.deviceID)",
            ])
        if replaced == nil, let handler = signInLost.withLock({ $0 }) {
            let user = kept.userID
            account.whenSignInLost { handler(user) }
        }
        // Ended at its server after the answer: the caller waits for its sign-in, not for that.
        if let replaced { Task { await retire(replaced, replacedBy: kept) } }
        return kept
    }

    /// The files of a single-account Ferry (a token, an encryption key) belong to the one account
    /// it knew: filed under it before another account signs in, which would otherwise be the
    /// first to read them and take them for its own.
    private func handOverSingleAccountFiles(before newUser: String) {
        let others = logger.attempt("reading the accounts") { try outbox.accounts() }?.filter { $0.userID != newUser }
        guard let others, others.count == 1 else { return }
        for vault in [vault] + otherVaults { vault.adoptSingleAccountFile(owner: others[0].userID) }
    }

    private func remember(_ signedIn: Session) throws(SignInError) -> (Session, StoredAccount) {
        var session = signedIn
        guard let storage = vault.store(session.tokens.kept, userID: session.userID, homeserver: session.homeserver)
        else {
            throw .tokenNotKept
        }
        let account: StoredAccount
        do throws(OutboxError) {
            account = try outbox.save(
                newSignIn: StoredAccount(
                    userID: session.userID, homeserver: session.homeserver, deviceID: session.deviceID,
                    signedIn: true, secretStorage: storage.rawValue))
        } catch {
            throw .storage(error)
        }
        session.signIn = account.signIn
        return (session, account)
    }

    /// Ends the sign-in the same person's new one replaced. The same device signed in again with
    /// Matrix's own login needs nothing: the server ended its old token itself (a login with an
    /// existing device id does). An OAuth 2.0 session is not ended by another one for the same
    /// device (the Matrix Authentication Service keeps both): it is revoked.
    private func retire(_ old: Session, replacedBy new: Session) async {
        guard old.accessToken != new.accessToken else { return }
        let sameDevice = old.deviceID == new.deviceID && old.homeserver == new.homeserver
        // Only Matrix's own login on both sides ends the old token by itself.
        guard !sameDevice || old.tokens.pair.oauth != nil || new.tokens.pair.oauth != nil else { return }
        await end(old, why: "replaced by a new sign-in")
    }

    private func end(_ session: Session, why: String) async {
        do {
            try await FerryMatrix.SignIn.end(session)
            logger.info(
                "ended a sign-in at its server",
                metadata: ["user": "\(session.userID)", "device": "\(session.deviceID)", "why": "\(why)"])
        } catch {
            logger.warning(
                "a sign-in could not be ended at its server",
                metadata: ["user": "\(session.userID)", "device": "\(session.deviceID)", "error": "\(error)"])
        }
    }

    /// The device to sign in with: the person's last one on that server (nil user: whoever the
    /// browser signs in, the last account there), when its encryption keys are still kept. A
    /// device's keys never change under the same id (other clients would take it for an
    /// impostor), so after a sign-out, which deletes them, the next sign-in is a new device.
    private func deviceToKeep(user: String?, homeserver: String) -> String? {
        // Unread, a new device: never a kept id whose keys might be gone.
        let accounts = logger.attempt("reading the accounts") { try outbox.accounts() } ?? []
        let there = accounts.filter { $0.homeserver == homeserver && !$0.deviceID.isEmpty }
        let matching = there.filter { stored in
            guard let user else { return true }
            let local = stored.userID.dropFirst().split(separator: ":").first.map(String.init)
            return stored.userID == user || local == user || "@" + user == stored.userID
        }
        // Whoever the browser signs in is not known beforehand: a device id is given only when
        // one account on that server could be meant, never another person's device.
        guard matching.count == 1, let candidate = matching.first else { return nil }
        let kept = logger.attempt("reading whether encryption records are kept") {
            try outbox.cryptoRecords(of: candidate.userID).hasCryptoRecords()
        }
        return kept == true ? candidate.deviceID : nil
    }
}
