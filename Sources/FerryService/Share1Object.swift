import Dispatch
import FerryAccount
import FerryCore
import FerryContract
import FerryEncryption
import GLibAdapter
import Logging

/// `io.github.ferryshare.Ferry.Share1` on the bus: decodes calls, runs them off the main loop,
/// answers with values or Ferry's named errors, and turns service events into signals.
final class Share1Object: Sendable {
    private let service: ShareService
    private let accounts: AccountService
    private let avatars: AvatarCache
    private let connection: BusConnection
    private let lifetime: Lifetime
    private let logger: Logger
    // Concurrent: staging one large file must not hold up another client's call.
    private let work = DispatchQueue(label: "ferry.share1", qos: .userInitiated, attributes: .concurrent)
    /// Called when org.freedesktop.Application.Open is refused, after the caller got the error.
    let onOpenRefused = WiredLater<@Sendable (ShareError) -> Void>({ _ in })
    /// What a start leaves until a share is answered, or until another call needs it.
    let startUp = WiredLater<StartUp?>(nil)
    init(
        service: ShareService, accounts: AccountService, avatars: AvatarCache, connection: BusConnection,
        lifetime: Lifetime, logger: Logger
    ) {
        self.service = service
        self.accounts = accounts
        self.avatars = avatars
        self.connection = connection
        self.lifetime = lifetime
        self.logger = logger
    }

    /// Exports the object. Must run before the application owns its bus name, or calls that
    /// activated the service would arrive before the interface exists and fail.
    func export() throws {
        // The bytes as they are: a String of them would be validated as UTF-8 first, on a cold
        // start's path (docs/PERFORMANCE.md).
        let interface = try InterfaceDescription(xml: PackageResources.Share1_xml, interface: FerryBus.share1)
        try connection.register(
            object: FerryBus.path, interface: interface,
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
        connection.emitSignal(
            path: FerryBus.path, interface: FerryBus.share1, name: Share1Signal.shareChanged.rawValue,
            arguments: .tuple([.string(share.id), .dictionary(ShareCodec.encode(share))]))
    }

    /// `SignInRequired`, with the sentence saying how many shares wait.
    func announceSignInRequired(_ reason: String) {
        connection.emitSignal(
            path: FerryBus.path, interface: FerryBus.share1, name: Share1Signal.signInRequired.rawValue,
            arguments: .tuple([.string(reason)]))
    }

    /// PropertiesChanged with every Share1 property (they change together: sign-in, sign-out, online).
    func announceAccountChanged() {
        connection.emitPropertiesChanged(
            path: FerryBus.path, interface: FerryBus.share1,
            changed: Dictionary(uniqueKeysWithValues: Self.properties.map { ($0, property($0)!) }))
    }

    /// Tells clients that Open was refused (Open itself cannot return an error).
    func announceRefusal(_ error: ShareError) {
        connection.emitSignal(
            path: FerryBus.path, interface: FerryBus.share1, name: Share1Signal.shareRefused.rawValue,
            arguments: .tuple([.string(error.name), .string(error.message)]))
    }

    /// `EmojiVerificationChanged`, carrying the verification as its methods answer it.
    func announceEmojiVerification(_ state: EmojiVerificationState) {
        connection.emitSignal(
            path: FerryBus.path, interface: FerryBus.share1, name: Share1Signal.emojiVerificationChanged.rawValue,
            arguments: .tuple([.dictionary(AccountCodec.report(state).dictionary)]))
    }

    private static let properties = Share1Property.allCases.map(\.rawValue)

    private func property(_ name: String) -> Variant? {
        let session = service.accounts.latest?.current
        switch Share1Property(rawValue: name) {
        case .signedIn: return .bool(session != nil)
        case .accountID: return .string(session?.userID ?? "")
        case .homeserver: return .string(session?.homeserver ?? "")
        case .online: return .bool(service.online)
        case .deviceVerification: return .string(service.verification.deviceVerification()?.rawValue ?? "")
        case .accounts: return .strings(service.accounts.signedIn.map(\.userID))
        case nil: return nil
        }
    }

    private func handle(_ call: MethodInvocation) {
        lifetime.beginCall()
        let request: Share1Request
        do throws(ShareError) {
            request = try Share1Request(method: call.method, arguments: call.arguments)
        } catch {
            refuse(call, error)
            lifetime.endCall()
            return
        }
        // A share is answered before the start-up (StartUp), every other call after it. Read once:
        // it is wired before the object is exported, and never changes after.
        let startUp = startUp.value
        if request.makesShare { startUp?.shareTaken() }
        if request.waitsForHomeserver {
            Task { [self] in
                defer { lifetime.endCall() }
                await startUp?.complete()
                do throws(ShareError) {
                    call.reply(try await performOnNetwork(request))
                } catch {
                    refuse(call, error)
                }
            }
            return
        }
        // Several accounts, and a room whose account the lists have not said: the servers are asked first.
        let lookUp = destinationsToLookUp(request)
        guard lookUp.isEmpty else {
            Task { [self] in
                await service.lookUpOwners(of: lookUp)
                work.async { [self] in answer(call, request, startUp: startUp) }
            }
            return
        }
        work.async { [self] in answer(call, request, startUp: startUp) }
    }

    private func answer(_ call: MethodInvocation, _ request: Share1Request, startUp: StartUp?) {
        defer { lifetime.endCall() }
        if !request.makesShare { startUp?.complete() }
        do throws(ShareError) {
            call.reply(try perform(request))
        } catch {
            refuse(call, error)
        }
        if request.makesShare { startUp?.shareAnswered() }
    }

    /// The destinations of a Share or CompleteShare that go out as an account the service has to
    /// find (none named for them) and that no destination list has said whose they are.
    private func destinationsToLookUp(_ request: Share1Request) -> [String] {
        switch request {
        case .share(let share, _, _) where share.account == nil:
            return service.destinationsToLookUp(share.destinations)
        case .completeShare(_, let destinations, _, let accounts):
            let named = accounts ?? []
            let unnamed = destinations.indices.filter { !named.indices.contains($0) || named[$0] == nil }
            return service.destinationsToLookUp(unnamed.map { destinations[$0] })
        default:
            return []
        }
    }

    /// Fails the call with Ferry's named error; a refused Open is also announced, as Open's own
    /// answer cannot carry it.
    private func refuse(_ call: MethodInvocation, _ error: ShareError) {
        call.fail(BusError(name: error.name, message: error.message))
        if call.method == Share1Request.openMethod {
            announceRefusal(error)
            onOpenRefused.value(error)
        }
    }

    private func perform(_ request: Share1Request) throws(ShareError) -> [Variant] {
        switch request {
        case .share(let share, let activationToken, let unknown):
            if !unknown.isEmpty { logger.info("ignoring unknown Share keys", metadata: ["keys": "\(unknown)"]) }
            return [.string(try service.share(share, activationToken: activationToken).id)]
        case .open(let uris, let activationToken):
            _ = try service.share(ShareRequest(uris: uris, source: .open), activationToken: activationToken)
            return []
        case .getShare(let id):
            return [.dictionary(ShareCodec.encode(try service.share(id: id)))]
        case .listShares:
            return [.dictionaries(service.shares().map(ShareCodec.encode))]
        case .cancel(let id):
            _ = try service.cancel(id: id)
            return []
        case .retry(let id):
            _ = try service.retry(id: id)
            return []
        case .completeShare(let id, let destinations, let message, let accounts):
            _ = try service.complete(id: id, destinations: destinations, message: message, accounts: accounts)
            return []
        default:
            // Only what waitsForHomeserver says no to comes here.
            preconditionFailure("\(request) is answered from a task")
        }
    }

    private func performOnNetwork(_ request: Share1Request) async throws(ShareError) -> [Variant] {
        switch request {
        case .signIn(let signIn):
            let session = try await accounts.signIn(AccountCodec.credentials(signIn))
            return [
                .dictionary(
                    SignedInAccount(
                        userID: session.userID, homeserver: session.homeserver,
                        deviceID: session.deviceID
                    ).dictionary)
            ]
        case .signOut(let account):
            try await accounts.signOut(account)
            return []
        case .getLoginFlows(let homeserver):
            return [.dictionary(try await accounts.loginFlows(homeserver: homeserver).dictionary)]
        case .verifyDevice(let secret, let account):
            let state = try await service.verification.verifyDevice(
                AccountCodec.verificationSecret(secret), account: account)
            return [.dictionary(["verification": .string(state.rawValue)])]
        case .setUpCrossSigning(let password, let account):
            let setup = try await service.verification.setUpCrossSigning(password: password, account: account)
            return [
                .dictionary(
                    CrossSigningSetUp(
                        recoveryKey: setup.recoveryKey,
                        verification: setup.verification.rawValue
                    ).dictionary)
            ]
        case .startEmojiVerification(let deviceID, let account):
            let state = try await service.verification.startEmojiVerification(deviceID: deviceID, account: account)
            return [.dictionary(AccountCodec.report(state).dictionary)]
        case .answerEmojiVerification(let id, let match):
            return [
                .dictionary(
                    AccountCodec.report(try await service.verification.answerEmojiVerification(id: id, match: match))
                        .dictionary)
            ]
        case .cancelEmojiVerification(let id):
            return [
                .dictionary(
                    AccountCodec.report(try await service.verification.cancelEmojiVerification(id: id)).dictionary)
            ]
        case .getEmojiVerification:
            return [
                .dictionary(
                    await service.verification.emojiVerification().map { AccountCodec.report($0).dictionary } ?? [:])
            ]
        case .getStatus:
            return [.dictionary(await accounts.statusAskingVerification().dictionary)]
        case .getAvatar(let account, let uri, let size):
            return [.string(try await avatars.path(of: uri, size: size, as: account))]
        case .listDestinations(let query, let limit):
            let entries = try await service.destinations(query: query, limit: limit)
            return [.dictionaries(entries.map(\.dictionary))]
        default:
            // Only what waitsForHomeserver says yes to comes here.
            preconditionFailure("\(request) is answered on the work queue")
        }
    }
}
