import FerryCore
import GLibAdapter

/// One Share1 call: its method, its arguments, how long to wait, and how its answer is read.
/// Each is written once (in `Share1`), for every client.
public struct Share1Call<Answer> {
    /// The Share1 method called.
    public let method: Share1Method
    /// Its in-arguments, in the order the interface declares them.
    public let arguments: [Variant]
    /// Milliseconds; -1 is GDBus's default (25 s), `Int32.max` waits for as long as it takes.
    public let timeout: Int32
    let read: ([Variant]) -> Answer?
}

/// The calls of Share1, with their answers decoded.
public enum Share1 {
    /// `Share(a{sv})` → the new share's id. No timeout: staging a large file takes as long as copying it.
    public static func share(_ intent: [String: Variant]) -> Share1Call<String> {
        Share1Call(method: .share, arguments: [.dictionary(intent)], timeout: .max) { $0.first?.stringValue }
    }

    /// `GetShare(s)` → the share.
    public static func getShare(_ id: String) -> Share1Call<Share> {
        Share1Call(method: .getShare, arguments: [.string(id)], timeout: -1) {
            $0.first?.dictionaryValue.flatMap(ShareCodec.decode)
        }
    }

    /// `ListShares()` → every share, newest first.
    public static func listShares() -> Share1Call<[Share]> {
        Share1Call(method: .listShares, arguments: [], timeout: -1) {
            $0.first?.dictionariesValue?.compactMap(ShareCodec.decode)
        }
    }

    /// `Cancel(s)`.
    public static func cancel(_ id: String) -> Share1Call<Void> {
        Share1Call(method: .cancel, arguments: [.string(id)], timeout: -1) { _ in () }
    }

    /// `CompleteShare(s, as, s)`: where a share waiting for a destination goes, and its message.
    /// With `accounts` (one per destination, nil where Ferry chooses), `CompleteShareAs(s, aa{sv}, s)`.
    public static func completeShare(
        _ id: String, destinations: [String], message: String, accounts: [String?]? = nil
    ) -> Share1Call<Void> {
        guard let accounts else {
            return Share1Call(
                method: .completeShare, arguments: [.string(id), .strings(destinations), .string(message)],
                timeout: -1
            ) { _ in () }
        }
        // Every destination goes, with its account where one is given (a shorter list names fewer).
        let chosen = destinations.enumerated().map { position, destination in
            var entry: [String: Variant] = ["destination": .string(destination)]
            if accounts.indices.contains(position), let account = accounts[position] {
                entry["account"] = .string(account)
            }
            return entry
        }
        return Share1Call(
            method: .completeShareAs, arguments: [.string(id), .dictionaries(chosen), .string(message)], timeout: -1
        ) { _ in () }
    }

    /// `Retry(s)`.
    public static func retry(_ id: String) -> Share1Call<Void> {
        Share1Call(method: .retry, arguments: [.string(id)], timeout: -1) { _ in () }
    }

    /// `SignIn(a{sv})` → the account. A browser sign-in waits for a person (the service gives up
    /// after five minutes); the others ask the homeserver.
    public static func signIn(_ request: SignInRequest) -> Share1Call<SignedInAccount> {
        let browser: Bool
        if case .browser = request.method { browser = true } else { browser = false }
        return Share1Call(
            method: .signIn, arguments: [.dictionary(request.dictionary)], timeout: browser ? 450_000 : 60_000
        ) {
            $0.first?.dictionaryValue.map(SignedInAccount.init)
        }
    }

    /// `SignOut()`, or `SignOutAccount(s)` for one account: the service also ends the token at
    /// the homeserver, so it may take a moment.
    public static func signOut(account: String? = nil) -> Share1Call<Void> {
        guard let account else { return Share1Call(method: .signOut, arguments: [], timeout: 60_000) { _ in () } }
        return Share1Call(method: .signOutAccount, arguments: [.string(account)], timeout: 60_000) { _ in () }
    }

    /// `GetLoginFlows(s)` → how the homeserver lets people sign in (the service asks it).
    public static func getLoginFlows(_ homeserver: String) -> Share1Call<LoginFlows> {
        Share1Call(method: .getLoginFlows, arguments: [.string(homeserver)], timeout: 60_000) { reply in
            reply.first?.dictionaryValue.map { LoginFlows($0, asked: homeserver) }
        }
    }

    /// `GetStatus()` → who is signed in, the device, the shares by state.
    public static func getStatus() -> Share1Call<StatusReport> {
        Share1Call(method: .getStatus, arguments: [], timeout: -1) { $0.first?.dictionaryValue.map(StatusReport.init) }
    }

    /// `VerifyDevice(a{sv})` → the device's verification (the service reads secret storage and
    /// uploads a signature; a passphrase also runs its key derivation first).
    /// The answer is the device's verification: "verified", or what it is instead.
    /// `account`: whose device (nil: the account signed in last's).
    public static func verifyDevice(_ secret: DeviceSecret, account: String? = nil) -> Share1Call<String> {
        var options = secret.dictionary
        if let account { options["account"] = .string(account) }
        return Share1Call(method: .verifyDevice, arguments: [.dictionary(options)], timeout: 120_000) {
            $0.first?.dictionaryValue.map { $0["verification"]?.stringValue ?? "" }
        }
    }

    /// `StartEmojiVerification(a{sv})` → the verification; `deviceID` nil asks every other device.
    public static func startEmojiVerification(
        deviceID: String?, account: String? = nil
    ) -> Share1Call<EmojiVerificationReport> {
        var options: [String: Variant] = deviceID.map { ["device-id": .string($0)] } ?? [:]
        if let account { options["account"] = .string(account) }
        return Share1Call(method: .startEmojiVerification, arguments: [.dictionary(options)], timeout: 60_000) {
            $0.first?.dictionaryValue.flatMap(EmojiVerificationReport.init)
        }
    }

    /// `AnswerEmojiVerification(s, b)` → the verification after the person's answer.
    public static func answerEmojiVerification(_ id: String, match: Bool) -> Share1Call<EmojiVerificationReport> {
        Share1Call(method: .answerEmojiVerification, arguments: [.string(id), .bool(match)], timeout: 60_000) {
            $0.first?.dictionaryValue.flatMap(EmojiVerificationReport.init)
        }
    }

    /// `CancelEmojiVerification(s)` → the verification, ended.
    public static func cancelEmojiVerification(_ id: String) -> Share1Call<EmojiVerificationReport> {
        Share1Call(method: .cancelEmojiVerification, arguments: [.string(id)], timeout: 60_000) {
            $0.first?.dictionaryValue.flatMap(EmojiVerificationReport.init)
        }
    }

    /// `GetEmojiVerification()` → the verification running or last ended (nil when none).
    public static func getEmojiVerification() -> Share1Call<EmojiVerificationReport?> {
        Share1Call(method: .getEmojiVerification, arguments: [], timeout: -1) {
            $0.first?.dictionaryValue.map(EmojiVerificationReport.init)
        }
    }

    /// `SetUpCrossSigning(a{sv})` → the new recovery key (shown once) and the device's verification.
    public static func setUpCrossSigning(password: String?, account: String? = nil) -> Share1Call<CrossSigningSetUp> {
        var auth: [String: Variant] = password.map { ["password": .string($0)] } ?? [:]
        if let account { auth["account"] = .string(account) }
        return Share1Call(method: .setUpCrossSigning, arguments: [.dictionary(auth)], timeout: 120_000) {
            $0.first?.dictionaryValue.map(CrossSigningSetUp.init)
        }
    }

    /// `GetAvatar(s, s, u)` → the file of `uri`'s picture (nil: the account's own) at `size` pixels
    /// square, fetched as `account`; "" when there is none.
    public static func getAvatar(account: String, uri: String?, size: UInt32) -> Share1Call<String> {
        Share1Call(
            method: .getAvatar, arguments: [.string(account), .string(uri ?? ""), .uint32(size)], timeout: 30_000
        ) { $0.first?.stringValue }
    }

    /// `ListDestinations(s, u)` → destinations matching `query` (all for ""), at most `limit` (0: no limit).
    public static func listDestinations(_ query: String, limit: UInt32) -> Share1Call<[DestinationListing]> {
        Share1Call(method: .listDestinations, arguments: [.string(query), .uint32(limit)], timeout: 60_000) {
            $0.first?.dictionariesValue?.compactMap(DestinationListing.init)
        }
    }
}

/// The one client of Share1: blocking calls for the command line, calls that answer on the main
/// loop for the UI, and the service's signals. Calling activates the service when it is not running.
public struct Share1Client: Sendable {
    /// The bus connection the calls go out on.
    public let connection: BusConnection

    /// A client on `connection` (the session bus in every Ferry program; a private bus in tests).
    public init(connection: BusConnection) { self.connection = connection }

    /// A client on the session bus.
    public static func session() throws(BusError) -> Share1Client {
        do {
            return Share1Client(connection: try BusConnection.session())
        } catch {
            throw (error as? BusError) ?? BusError(name: "org.freedesktop.DBus.Error.Failed", message: "\(error)")
        }
    }

    /// Calls and waits for the answer.
    public func call<Answer>(_ call: Share1Call<Answer>) throws(BusError) -> Answer {
        let reply: Variant
        do {
            reply = try connection.call(
                destination: FerryBus.name, path: FerryBus.path, interface: FerryBus.share1,
                method: call.method.rawValue, arguments: .tuple(call.arguments),
                timeoutMilliseconds: call.timeout)
        } catch {
            throw (error as? BusError) ?? BusError(name: "org.freedesktop.DBus.Error.Failed", message: "\(error)")
        }
        guard let answer = call.read(reply.tupleValue ?? []) else { throw Self.unexpectedReply(call.method) }
        return answer
    }

    /// Calls without waiting; `completion` runs on the caller's thread-default main context.
    public func call<Answer>(_ call: Share1Call<Answer>, completion: @escaping (Result<Answer, BusError>) -> Void) {
        connection.call(
            destination: FerryBus.name, path: FerryBus.path, interface: FerryBus.share1,
            method: call.method.rawValue, arguments: .tuple(call.arguments),
            timeoutMilliseconds: call.timeout
        ) { result in
            completion(
                result.flatMap { reply in
                    call.read(reply.tupleValue ?? []).map { .success($0) }
                        ?? .failure(Self.unexpectedReply(call.method))
                })
        }
    }

    /// Every `ShareChanged`, on the caller's thread-default main context.
    public func onShareChanged(_ handler: @escaping (Share) -> Void) {
        connection.subscribe(
            sender: FerryBus.name, interface: FerryBus.share1, member: Share1Signal.shareChanged.rawValue,
            path: FerryBus.path
        ) { _, arguments in
            guard case .dictionary(let dict)? = arguments.tupleValue?.last, let share = ShareCodec.decode(dict) else {
                return
            }
            handler(share)
        }
    }

    /// Every change of Share1's properties (PropertiesChanged), by property name.
    public func onPropertiesChanged(_ handler: @escaping ([String: Variant]) -> Void) {
        connection.subscribe(
            sender: FerryBus.name, interface: FerryBus.properties, member: "PropertiesChanged",
            path: FerryBus.path
        ) { _, arguments in
            guard let values = arguments.tupleValue, values.count >= 2, values[0].stringValue == FerryBus.share1,
                case .dictionary(let changed) = values[1]
            else { return }
            handler(changed)
        }
    }

    /// The user ids of the signed-in accounts, the last signed in first: the `Accounts` property,
    /// a read that never waits for a homeserver; from a service without it (an older one still
    /// running), GetStatus's list.
    public func signedInAccounts() throws(BusError) -> [String] {
        do {
            let reply = try connection.call(
                destination: FerryBus.name, path: FerryBus.path, interface: FerryBus.properties, method: "Get",
                arguments: .tuple([.string(FerryBus.share1), .string(Share1Property.accounts.rawValue)]),
                timeoutMilliseconds: -1)
            if case .boxed(let value)? = reply.tupleValue?.first, let accounts = value.stringsValue { return accounts }
        } catch let error as BusError where !Self.isUnknownProperty(error) {
            throw error
        } catch {}
        return try call(Share1.getStatus()).accounts.map(\.userID)
    }

    /// What a service answers for a property it does not have.
    static func isUnknownProperty(_ error: BusError) -> Bool {
        ["org.freedesktop.DBus.Error.UnknownProperty", "org.freedesktop.DBus.Error.InvalidArgs"].contains(error.name)
    }

    /// Share1's properties, read afresh, without waiting.
    public func properties(_ completion: @escaping (Result<[String: Variant], BusError>) -> Void) {
        connection.call(
            destination: FerryBus.name, path: FerryBus.path, interface: FerryBus.properties,
            method: "GetAll", arguments: .tuple([.string(FerryBus.share1)])
        ) { result in
            completion(result.map { $0.tupleValue?.first?.dictionaryValue ?? [:] })
        }
    }

    static func unexpectedReply(_ method: Share1Method) -> BusError {
        BusError(
            name: "org.freedesktop.DBus.Error.InvalidSignature",
            // TRANSLATORS: {method} is the name of a D-Bus method, such as GetShare.
            message: tr("Ferry's service sent an unexpected reply to {method}.", ["method": method.rawValue]))
    }
}
