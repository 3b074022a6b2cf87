import FerryContract
import FerryCore
import GLibAdapter

/// The UI's only way to Ferry: Share1's one client (FerryContract), called without blocking the
/// main loop, plus who is observing what. Replies and signals arrive on the main thread.
@GLibMain public final class ServiceClient {
    private let client: Share1Client
    private var shareObservers: [Int: (ShareSnapshot) -> Void] = [:]
    private var accountObservers: [Int: (AccountState) -> Void] = [:]
    private var nextToken = 0
    public private(set) var account = AccountState()

    public init() throws {
        client = try Share1Client.session()
        client.onShareChanged { [weak self] share in
            guard let self else { return }
            let snapshot = ShareSnapshot(share)
            for observer in self.shareObservers.values { observer(snapshot) }
        }
        client.onPropertiesChanged { [weak self] changed in
            guard let self else { return }
            self.account.update(changed)
            self.notifyAccount()
        }
    }

    // MARK: Observing

    /// Every ShareChanged; keep the token to stop observing when the window closes.
    public func observeShares(_ handler: @escaping (ShareSnapshot) -> Void) -> Int {
        nextToken += 1
        shareObservers[nextToken] = handler
        return nextToken
    }

    /// Sign-in and connectivity changes (the SignedIn, AccountId, Homeserver and Online properties).
    public func observeAccount(_ handler: @escaping (AccountState) -> Void) -> Int {
        nextToken += 1
        accountObservers[nextToken] = handler
        return nextToken
    }

    public func stopObserving(_ token: Int) {
        shareObservers[token] = nil
        accountObservers[token] = nil
    }

    /// Reads the account properties afresh (once at start; then PropertiesChanged keeps them).
    public func refreshAccount(_ done: @escaping () -> Void = {}) {
        client.properties { [weak self] result in
            guard let self else { return }
            if case .success(let all) = result {
                self.account.update(all)
                self.notifyAccount()
            }
            done()
        }
    }

    private func notifyAccount() {
        for observer in accountObservers.values { observer(account) }
    }

    // MARK: Shares

    public func share(_ id: String, _ completion: @escaping (Result<ShareSnapshot, BusError>) -> Void) {
        client.call(Share1.getShare(id)) { completion($0.map(ShareSnapshot.init)) }
    }

    public func shares(_ completion: @escaping (Result<[ShareSnapshot], BusError>) -> Void) {
        client.call(Share1.listShares()) { completion($0.map { $0.map(ShareSnapshot.init) }) }
    }

    /// `accounts`: the account of each destination (the row it was chosen from), nil where the row
    /// named none; with them, a room two accounts have joined goes out as the one chosen.
    public func completeShare(
        _ id: String, destinations: [String], message: String, accounts: [String?]? = nil,
        _ completion: @escaping (Result<Void, BusError>) -> Void
    ) {
        client.call(
            Share1.completeShare(id, destinations: destinations, message: message, accounts: accounts),
            completion: completion)
    }

    public func cancel(_ id: String, _ completion: @escaping (Result<Void, BusError>) -> Void) {
        client.call(Share1.cancel(id), completion: completion)
    }

    public func retry(_ id: String, _ completion: @escaping (Result<Void, BusError>) -> Void) {
        client.call(Share1.retry(id), completion: completion)
    }

    // MARK: Destinations

    public func destinations(
        matching query: String, limit: UInt32,
        _ completion: @escaping (Result<[DestinationListing], BusError>) -> Void
    ) {
        client.call(Share1.listDestinations(query, limit: limit), completion: completion)
    }

    /// The file of a room's or a person's picture (`uri`; nil: `account`'s own), "" when there is none.
    public func avatar(
        account: String, uri: String?, size: UInt32, _ completion: @escaping (Result<String, BusError>) -> Void
    ) {
        client.call(Share1.getAvatar(account: account, uri: uri, size: size), completion: completion)
    }

    // MARK: Account

    public typealias LoginFlows = FerryContract.LoginFlows

    public func loginFlows(homeserver: String, _ completion: @escaping (Result<LoginFlows, BusError>) -> Void) {
        client.call(Share1.getLoginFlows(homeserver), completion: completion)
    }

    public enum Credentials {
        case password(homeserver: String, user: String, password: String)
        case browser(homeserver: String, createAccount: Bool = false)
    }

    /// Signs in; a browser sign-in waits for the person (up to five minutes on the service's side).
    public func signIn(_ credentials: Credentials, _ completion: @escaping (Result<String, BusError>) -> Void) {
        let request: SignInRequest
        switch credentials {
        case .password(let homeserver, let user, let password):
            request = SignInRequest(homeserver: homeserver, method: .password(user: user, password: password))
        case .browser(let homeserver, let createAccount):
            request = SignInRequest(homeserver: homeserver, method: .browser(createAccount: createAccount))
        }
        client.call(Share1.signIn(request)) { completion($0.map(\.userID)) }
    }

    /// Signs `account` out (nil: the account signed in last, the one the properties describe).
    public func signOut(account: String? = nil, _ completion: @escaping (Result<Void, BusError>) -> Void) {
        client.call(Share1.signOut(account: account), completion: completion)
    }

    /// Every signed-in account, as GetStatus lists them; none when the service cannot say.
    public func accounts(_ completion: @escaping ([AccountListing]) -> Void) {
        client.call(Share1.getStatus()) { completion((try? $0.get())?.accounts ?? []) }
    }

    /// Verifies Ferry's device with the recovery key or its passphrase (one field for either);
    /// the service answers "verified", or why not.
    /// `account`: whose device (a user id); nil, the account signed in last.
    public func verifyDevice(
        keyOrPassphrase: String, account: String? = nil, _ completion: @escaping (Result<String, BusError>) -> Void
    ) {
        client.call(Share1.verifyDevice(.either(keyOrPassphrase), account: account)) {
            completion($0)
        }
    }

    /// Sets up cross-signing with a new recovery key (returned once); `password` only when the
    /// service answered PasswordRequired.
    public func setUpCrossSigning(password: String?, _ completion: @escaping (Result<String, BusError>) -> Void) {
        client.call(Share1.setUpCrossSigning(password: password)) { completion($0.map(\.recoveryKey)) }
    }

    /// Whether Ferry's device is verified, asked from the homeserver when the service does not
    /// know it yet or it may have changed (GetStatus waits a few seconds); "" when it cannot tell.
    public func deviceVerification(_ completion: @escaping (String) -> Void) {
        client.call(Share1.getStatus()) { [weak self] result in
            let state = (try? result.get())?.deviceVerification ?? ""
            if let self, !state.isEmpty, state != self.account.deviceVerification {
                self.account.deviceVerification = state
                self.notifyAccount()
            }
            completion(state)
        }
    }
}

extension BusError {
    /// The short name after Ferry's error prefix ("NotSignedIn"), or nil for other errors.
    public var ferryName: String? {
        let prefix = "io.github.ferryshare.Ferry.Error."
        return name.hasPrefix(prefix) ? String(name.dropFirst(prefix.count)) : nil
    }

    /// A sentence for a person, also for errors that are not Ferry's own (no service, timeouts).
    public var sentence: String {
        if ferryName != nil { return message }
        switch name {
        case "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.Spawn.ChildExited":
            return tr("Ferry's service is not running.")
        case "org.freedesktop.DBus.Error.NoReply", "org.freedesktop.DBus.Error.Timeout":
            return tr("Ferry's service did not answer in time.")
        case "org.freedesktop.DBus.Error.UnknownMethod":
            return tr("This version of Ferry's service cannot do that yet.")
        default: return message
        }
    }
}
