import FerryCore
import GLibAdapter

/// The UI's only way to Ferry: the public Share1 interface on the session bus, called without
/// blocking the main loop. Replies and signals arrive on the main thread.
public final class ServiceClient {
    public static let busName = "io.github.ferryshare.Ferry"
    public static let objectPath = "/io/github/ferryshare/Ferry"
    public static let interface = "io.github.ferryshare.Ferry.Share1"

    private let connection: BusConnection
    private var shareObservers: [Int: (ShareSnapshot) -> Void] = [:]
    private var accountObservers: [Int: (AccountState) -> Void] = [:]
    private var nextToken = 0
    public private(set) var account = AccountState()

    public init() throws {
        connection = try BusConnection.session()
        connection.subscribe(sender: Self.busName, interface: Self.interface, member: "ShareChanged",
                             path: Self.objectPath) { [weak self] _, arguments in
            guard let self, case .dictionary(let dict)? = arguments.tupleValue?.last,
                  let share = ShareSnapshot(dict) else { return }
            for observer in self.shareObservers.values { observer(share) }
        }
        connection.subscribe(sender: Self.busName, interface: "org.freedesktop.DBus.Properties",
                             member: "PropertiesChanged", path: Self.objectPath) { [weak self] _, arguments in
            guard let self, let values = arguments.tupleValue, values.count >= 2,
                  values[0].stringValue == Self.interface, case .dictionary(let changed) = values[1] else { return }
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
        connection.call(destination: Self.busName, path: Self.objectPath, interface: "org.freedesktop.DBus.Properties",
                        method: "GetAll", arguments: .tuple([.string(Self.interface)])) { [weak self] result in
            guard let self else { return }
            if case .success(let reply) = result, case .dictionary(let all)? = reply.tupleValue?.first {
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
        call("GetShare", [.string(id)]) { result in
            completion(result.flatMap { reply in
                guard case .dictionary(let dict)? = reply.first, let share = ShareSnapshot(dict) else {
                    return .failure(Self.malformed("GetShare"))
                }
                return .success(share)
            })
        }
    }

    public func shares(_ completion: @escaping (Result<[ShareSnapshot], BusError>) -> Void) {
        call("ListShares", []) { result in
            completion(result.map { reply in (reply.first?.dictionariesValue ?? []).compactMap(ShareSnapshot.init) })
        }
    }

    public func completeShare(_ id: String, destinations: [String], message: String,
                              _ completion: @escaping (Result<Void, BusError>) -> Void) {
        call("CompleteShare", [.string(id), .strings(destinations), .string(message)]) { completion($0.map { _ in () }) }
    }

    public func cancel(_ id: String, _ completion: @escaping (Result<Void, BusError>) -> Void) {
        call("Cancel", [.string(id)]) { completion($0.map { _ in () }) }
    }

    public func retry(_ id: String, _ completion: @escaping (Result<Void, BusError>) -> Void) {
        call("Retry", [.string(id)]) { completion($0.map { _ in () }) }
    }

    // MARK: Destinations

    public func destinations(matching query: String, limit: UInt32,
                             _ completion: @escaping (Result<[DestinationOption], BusError>) -> Void) {
        call("ListDestinations", [.string(query), .uint32(limit)]) { result in
            completion(result.map { reply in (reply.first?.dictionariesValue ?? []).compactMap(DestinationOption.init) })
        }
    }

    // MARK: Account

    public struct LoginFlows: Equatable {
        public var homeserver: String
        public var password: Bool
        public var sso: Bool
    }

    public func loginFlows(homeserver: String, _ completion: @escaping (Result<LoginFlows, BusError>) -> Void) {
        call("GetLoginFlows", [.string(homeserver)]) { result in
            completion(result.map { reply in
                let dict = reply.first?.dictionaryValue ?? [:]
                return LoginFlows(homeserver: dict["homeserver"]?.stringValue ?? homeserver,
                                  password: dict["password"]?.boolValue ?? true, sso: dict["sso"]?.boolValue ?? false)
            })
        }
    }

    public enum Credentials {
        case password(homeserver: String, user: String, password: String)
        case browser(homeserver: String)
    }

    /// Signs in; a browser sign-in waits for the person (up to five minutes on the service's side).
    public func signIn(_ credentials: Credentials, _ completion: @escaping (Result<String, BusError>) -> Void) {
        let dict: [String: Variant]
        let timeout: Int32
        switch credentials {
        case .password(let homeserver, let user, let password):
            dict = ["homeserver": .string(homeserver), "user": .string(user), "password": .string(password)]
            timeout = 60_000
        case .browser(let homeserver):
            dict = ["homeserver": .string(homeserver), "sso": .bool(true)]
            timeout = 330_000
        }
        call("SignIn", [.dictionary(dict)], timeout: timeout) { result in
            completion(result.map { reply in reply.first?.dictionaryValue?["user-id"]?.stringValue ?? "" })
        }
    }

    public func signOut(_ completion: @escaping (Result<Void, BusError>) -> Void) {
        call("SignOut", []) { completion($0.map { _ in () }) }
    }

    // MARK: -

    private func call(_ method: String, _ arguments: [Variant], timeout: Int32 = 25_000,
                      _ completion: @escaping (Result<[Variant], BusError>) -> Void) {
        connection.call(destination: Self.busName, path: Self.objectPath, interface: Self.interface, method: method,
                        arguments: .tuple(arguments), timeoutMilliseconds: timeout) { result in
            completion(result.map { $0.tupleValue ?? [] })
        }
    }

    private static func malformed(_ method: String) -> BusError {
        BusError(name: "org.freedesktop.DBus.Error.InvalidSignature", message: "Ferry's service sent an unexpected reply to \(method).")
    }
}

/// Who is signed in and whether the homeserver answers: the Share1 properties.
public struct AccountState: Equatable {
    public var signedIn = false
    public var accountID = ""
    public var homeserver = ""
    /// Assumed until the service says otherwise, so an older service shows no offline banner.
    public var online = true

    mutating func update(_ properties: [String: Variant]) {
        if let value = properties["SignedIn"]?.boolValue { signedIn = value }
        if let value = properties["AccountId"]?.stringValue { accountID = value }
        if let value = properties["Homeserver"]?.stringValue { homeserver = value }
        if let value = properties["Online"]?.boolValue { online = value }
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
            return "Ferry's service is not running."
        case "org.freedesktop.DBus.Error.NoReply", "org.freedesktop.DBus.Error.Timeout":
            return "Ferry's service did not answer in time."
        case "org.freedesktop.DBus.Error.UnknownMethod":
            return "This version of Ferry's service cannot do that yet."
        default: return message
        }
    }
}
