import Dispatch
import FerryAccount
import FerryCore
import FerryContract
import FerryEncryption
import FerryIntake
import GLibAdapter
import Logging

/// `io.github.ferryshare.Ferry.Share1` on the bus: decodes calls, runs them off the main loop,
/// answers with values or Ferry's named errors, and turns service events into signals.
// @unchecked Sendable: every stored property is an immutable reference to a Sendable part, except
// `onOpenRefused` and `startUp`, which are set once while the service is wired, before the object is exported and
// any call can reach it (ServiceApplication.run).
final class Share1Object: @unchecked Sendable {
    private let service: ShareService
    private let connection: BusConnection
    private let lifetime: Lifetime
    private let logger: Logger
    // Concurrent: staging one large file must not hold up another client's call.
    private let work = DispatchQueue(label: "ferry.share1", qos: .userInitiated, attributes: .concurrent)
    /// Called when org.freedesktop.Application.Open is refused, after the caller got the error.
    var onOpenRefused: @Sendable (ShareError) -> Void = { _ in }
    /// What a start leaves until a share is answered, or until another call needs it.
    var startUp: StartUp?
    /// Methods that wait for the homeserver: answered from a task, not from the work queue.
    private static let networkMethods: Set<String> = ["SignIn", "SignOut", "GetLoginFlows", "ListDestinations",
                                                                 "VerifyDevice", "SetUpCrossSigning", "GetStatus",
                                                                 "StartEmojiVerification", "AnswerEmojiVerification",
                                                                 "CancelEmojiVerification", "GetEmojiVerification"]

    init(service: ShareService, connection: BusConnection, lifetime: Lifetime, logger: Logger) {
        self.service = service
        self.connection = connection
        self.lifetime = lifetime
        self.logger = logger
    }

    /// Exports the object. Must run before the application owns its bus name, or calls that
    /// activated the service would arrive before the interface exists and fail.
    func export() throws {
        // The bytes as they are: a String of them would be validated as UTF-8 first (~0.25 M instructions).
        let interface = try InterfaceDescription(xml: PackageResources.Share1_xml, interface: FerryBus.share1)
        try connection.register(object: FerryBus.path, interface: interface,
                                methods: { [unowned self] in self.handle($0) },
                                properties: { [unowned self] in self.property($0) })
        // Open is taken over from GApplication so that a refused share fails the call with Ferry's
        // error, as Share does, instead of an empty reply that says nothing was wrong.
        connection.intercept(path: FerryBus.path, interface: FerryBus.application, member: "Open") {
            [unowned self] in self.handle($0)
        }
    }

    /// `ShareChanged`, carrying the share as GetShare would.
    func announceShareChanged(_ share: Share) {
        connection.emitSignal(path: FerryBus.path, interface: FerryBus.share1, name: Share1Signal.shareChanged.rawValue,
                              arguments: .tuple([.string(share.id), .dictionary(ShareCodec.encode(share))]))
    }

    /// `SignInRequired`, with the sentence saying how many shares wait.
    func announceSignInRequired(_ reason: String) {
        connection.emitSignal(path: FerryBus.path, interface: FerryBus.share1, name: Share1Signal.signInRequired.rawValue,
                              arguments: .tuple([.string(reason)]))
    }

    /// PropertiesChanged with every Share1 property (they change together: sign-in, sign-out, online).
    func announceAccountChanged() {
        connection.emitPropertiesChanged(path: FerryBus.path, interface: FerryBus.share1,
                                         changed: Dictionary(uniqueKeysWithValues: Self.properties.map { ($0, property($0)!) }))
    }

    /// Tells clients that Open was refused (Open itself cannot return an error).
    func announceRefusal(_ error: ShareError) {
        connection.emitSignal(path: FerryBus.path, interface: FerryBus.share1, name: Share1Signal.shareRefused.rawValue,
                              arguments: .tuple([.string(error.name), .string(error.message)]))
    }

    /// `EmojiVerificationChanged`, carrying the verification as its methods answer it.
    func announceEmojiVerification(_ state: EmojiVerificationState) {
        connection.emitSignal(path: FerryBus.path, interface: FerryBus.share1, name: Share1Signal.emojiVerificationChanged.rawValue,
                              arguments: .tuple([.dictionary(AccountCodec.encode(state))]))
    }

    private static let properties = Share1Property.allCases.map(\.rawValue)

    private func property(_ name: String) -> Variant? {
        let session = service.account.current
        switch Share1Property(rawValue: name) {
        case .signedIn: return .bool(session != nil)
        case .accountID: return .string(session?.userID ?? "")
        case .homeserver: return .string(session?.homeserver ?? "")
        case .online: return .bool(service.online)
        case .deviceVerification: return .string(service.deviceVerification()?.rawValue ?? "")
        case nil: return nil
        }
    }

    private func handle(_ call: MethodInvocation) {
        lifetime.beginCall()
        // A share is answered before the start-up (StartUp), every other call after it.
        let isShare = call.method == "Share" || call.method == "Open"
        if isShare { startUp?.shareTaken() }
        if Self.networkMethods.contains(call.method) {
            Task { [self] in
                defer { lifetime.endCall() }
                await startUp?.complete()
                do throws(ShareError) {
                    call.reply(try await performOnNetwork(call.method, call.arguments))
                } catch {
                    call.fail(BusError(name: error.name, message: error.message))
                }
            }
            return
        }
        work.async { [self] in
            defer { lifetime.endCall() }
            if !isShare { startUp?.complete() }
            do throws(ShareError) {
                call.reply(try perform(call.method, call.arguments))
            } catch {
                call.fail(BusError(name: error.name, message: error.message))
                if call.method == "Open" {
                    announceRefusal(error)
                    onOpenRefused(error)
                }
            }
            if isShare { startUp?.shareAnswered() }
        }
    }

    private func perform(_ method: String, _ arguments: [Variant]) throws(ShareError) -> [Variant] {
        switch (method, arguments.first) {
        case ("Share", .dictionary(let dict)?):
            let (request, unknown) = try ShareRequestDecoding.decode(dict, source: .share)
            if !unknown.isEmpty { logger.info("ignoring unknown Share keys", metadata: ["keys": "\(unknown)"]) }
            return [.string(try service.share(request, activationToken: dict["activation-token"]?.stringValue).id)]
        case ("Open", .strings(let uris)?):
            // org.freedesktop.Application.Open(as uris, a{sv} platform_data): one share of every URI.
            let platform = arguments.count > 1 ? arguments[1].dictionaryValue ?? [:] : [:]
            let token = platform["activation-token"]?.stringValue ?? platform["desktop-startup-id"]?.stringValue
            _ = try service.share(ShareRequest(uris: uris, source: .open), activationToken: token)
            return []
        case ("Open", _):
            // Taken over from GApplication, so no introspection checked the signature.
            // TRANSLATORS: an error for a program calling Ferry over D-Bus; {method} is a D-Bus method's name, {signature} its D-Bus argument types (such as "as, a{sv}").
            throw .invalidArgument(tr("{method} takes a list of URIs and a dictionary of platform data ({signature}).",
                                      ["method": "Open", "signature": "as, a{sv}"]))
        case ("GetShare", .string(let id)?):
            return [.dictionary(ShareCodec.encode(try service.share(id: id)))]
        case ("ListShares", _):
            return [.dictionaries(service.shares().map(ShareCodec.encode))]
        case ("Cancel", .string(let id)?):
            _ = try service.cancel(id: id)
            return []
        case ("Retry", .string(let id)?):
            _ = try service.retry(id: id)
            return []
        case ("CompleteShare", .string(let id)?):
            guard arguments.count == 3, case .strings(let destinations) = arguments[1],
                  case .string(let message) = arguments[2] else {
                // TRANSLATORS: an error for a program calling Ferry over D-Bus; {method} is a D-Bus method's name, {signature} its D-Bus argument types (such as "s, as, s").
                throw .invalidArgument(tr("{method} takes ({signature}).", ["method": "CompleteShare", "signature": "s, as, s"]))
            }
            _ = try service.complete(id: id, destinations: destinations, message: message)
            return []
        default:
            // GDBus checks signatures against the XML, so only a method added there but not here lands here.
            // TRANSLATORS: an error for a program calling Ferry over D-Bus; {method} is a D-Bus method's name.
            throw .invalidArgument(tr("Ferry does not implement {method} yet.", ["method": method]))
        }
    }

    private func performOnNetwork(_ method: String, _ arguments: [Variant]) async throws(ShareError) -> [Variant] {
        switch (method, arguments.first) {
        case ("SignIn", .dictionary(let dict)?):
            let session = try await service.signIn(try AccountCodec.credentials(dict))
            return [.dictionary(["user-id": .string(session.userID), "homeserver": .string(session.homeserver),
                                 "device-id": .string(session.deviceID)])]
        case ("SignOut", _):
            await service.signOut()
            return []
        case ("GetLoginFlows", .string(let homeserver)?):
            return [.dictionary(AccountCodec.encode(try await service.loginFlows(homeserver: homeserver)))]
        case ("VerifyDevice", .dictionary(let dict)?):
            let state = try await service.verifyDevice(try AccountCodec.verificationSecret(dict))
            return [.dictionary(["verification": .string(state.rawValue)])]
        case ("SetUpCrossSigning", .dictionary(let dict)?):
            if let value = dict["password"], value.typeString != "s" || (value.stringValue?.utf8.count ?? 0) > 1024 {
                // TRANSLATORS: an error for a program calling Ferry over D-Bus; {key} is the name of an argument, {type} and {given} are D-Bus types (such as "s").
                throw .invalidArgument(tr("“{key}” must be of type “{type}”, not “{given}”.",
                                          ["key": "password", "type": "s", "given": value.typeString]))
            }
            let setup = try await service.setUpCrossSigning(password: dict["password"]?.stringValue)
            return [.dictionary(["recovery-key": .string(setup.recoveryKey), "verification": .string(setup.verification.rawValue)])]
        case ("StartEmojiVerification", .dictionary(let dict)?):
            if let value = dict["device-id"], value.typeString != "s" || (value.stringValue?.utf8.count ?? 0) > 255 {
                // TRANSLATORS: an error for a program calling Ferry over D-Bus; {key} is the name of an argument, {type} a D-Bus type (such as "s").
                throw .invalidArgument(tr("“{key}” must be a device id of type “{type}”.", ["key": "device-id", "type": "s"]))
            }
            return [.dictionary(AccountCodec.encode(try await service.startEmojiVerification(deviceID: dict["device-id"]?.stringValue)))]
        case ("AnswerEmojiVerification", .string(let id)?):
            guard arguments.count == 2, case .bool(let match) = arguments[1] else {
                // TRANSLATORS: an error for a program calling Ferry over D-Bus; {method} is a D-Bus method's name, {signature} its D-Bus argument types (such as "s, as, s").
                throw .invalidArgument(tr("{method} takes ({signature}).", ["method": "AnswerEmojiVerification", "signature": "s, b"]))
            }
            return [.dictionary(AccountCodec.encode(try await service.answerEmojiVerification(id: id, match: match)))]
        case ("CancelEmojiVerification", .string(let id)?):
            return [.dictionary(AccountCodec.encode(try await service.cancelEmojiVerification(id: id)))]
        case ("GetEmojiVerification", _):
            return [.dictionary(await service.emojiVerification().map(AccountCodec.encode) ?? [:])]
        case ("GetStatus", _):
            return [.dictionary(AccountCodec.encode(await service.statusAskingVerification()))]
        case ("ListDestinations", .string(let query)?):
            let limit = arguments.count > 1 ? arguments[1].uint32Value ?? 0 : 0
            let entries = try await service.destinations(query: query, limit: Int(limit))
            return [.dictionaries(entries.map(AccountCodec.encode))]
        default:
            // TRANSLATORS: an error for a program calling Ferry over D-Bus; {method} is a D-Bus method's name.
            throw .invalidArgument(tr("Ferry does not implement {method} yet.", ["method": method]))
        }
    }
}
