import FerryCore
import GLibAdapter

/// One call to Share1 (or GApplication's `Open`) as the service receives it: decoded once from
/// its method name and arguments, every argument checked, so that what the service runs is a
/// typed request and never a method name or a dictionary.
///
/// GDBus checks each call's signature against the interface XML before it gets here (except
/// `Open`, which the service takes over from GApplication); what is checked here is what a
/// signature cannot say: dictionary keys and their types, empty or overlong values.
public enum Share1Request: Sendable {
    case share(ShareRequest, activationToken: String?, unknownKeys: [String])
    case open(uris: [String], activationToken: String?)
    case getShare(id: String)
    case listShares
    case cancel(id: String)
    /// `accounts` (`CompleteShareAs`): the account of each destination, nil where none is named.
    case completeShare(id: String, destinations: [String], message: String, accounts: [String?]?)
    case retry(id: String)
    case signIn(SignInRequest)
    /// `account` nil: the account signed in last (`SignOut`).
    case signOut(account: String?)
    case getLoginFlows(homeserver: String)
    case listDestinations(query: String, limit: Int)
    case getStatus
    /// `account` nil (in each of these): the account signed in last.
    case verifyDevice(DeviceSecret, account: String?)
    case setUpCrossSigning(password: String?, account: String?)
    case startEmojiVerification(deviceID: String?, account: String?)
    case answerEmojiVerification(id: String, match: Bool)
    case cancelEmojiVerification(id: String)
    case getEmojiVerification
    /// `uri` nil: the account's own picture.
    case getAvatar(account: String, uri: MediaURI?, size: Int)

    /// The name GApplication's `Open` has on the bus.
    public static let openMethod = "Open"

    /// Decodes a call; a bad argument is `InvalidArgument`, with a sentence naming it.
    public init(method: String, arguments: [Variant]) throws(ShareError) {
        if method == Self.openMethod {
            self = try Self.open(arguments)
            return
        }
        guard let known = Share1Method(rawValue: method) else { throw Self.unimplemented(method) }
        let first = arguments.first
        switch known {
        case .share:
            guard case .dictionary(let dict)? = first else { throw Self.takes(method, "a{sv}") }
            let (request, unknown) = try ShareRequestDecoding.decode(dict, source: .share)
            self = .share(request, activationToken: dict["activation-token"]?.stringValue, unknownKeys: unknown)
        case .getShare: self = .getShare(id: try Self.string(first, method, "s"))
        case .listShares: self = .listShares
        case .cancel: self = .cancel(id: try Self.string(first, method, "s"))
        case .retry: self = .retry(id: try Self.string(first, method, "s"))
        case .completeShare:
            guard arguments.count == 3, case .string(let id) = arguments[0],
                case .strings(let destinations) = arguments[1],
                case .string(let message) = arguments[2]
            else { throw Self.takes(method, "s, as, s") }
            self = .completeShare(id: id, destinations: destinations, message: message, accounts: nil)
        case .completeShareAs:
            guard arguments.count == 3, case .string(let id) = arguments[0],
                case .dictionaries(let chosen) = arguments[1],
                case .string(let message) = arguments[2]
            else { throw Self.takes(method, "s, aa{sv}, s") }
            var destinations: [String] = []
            var accounts: [String?] = []
            for entry in chosen {
                guard let destination = entry["destination"], destination.typeString == "s",
                    let name = destination.stringValue
                else {
                    // TRANSLATORS: “destination” is the name of a key; keep it as it is.
                    throw .invalidArgument(tr("Each destination needs its “destination”: a room id, alias or user id."))
                }
                destinations.append(name)
                accounts.append(try Self.account(in: entry))
            }
            self = .completeShare(id: id, destinations: destinations, message: message, accounts: accounts)
        case .signIn:
            guard case .dictionary(let dict)? = first else { throw Self.takes(method, "a{sv}") }
            self = .signIn(try SignInRequest(dict))
        case .signOut: self = .signOut(account: nil)
        case .signOutAccount: self = .signOut(account: try Self.string(first, method, "s"))
        case .getLoginFlows: self = .getLoginFlows(homeserver: try Self.string(first, method, "s"))
        case .listDestinations:
            let query = try Self.string(first, method, "s, u")
            self = .listDestinations(query: query, limit: Int(arguments.count > 1 ? arguments[1].uint32Value ?? 0 : 0))
        case .getStatus: self = .getStatus
        case .verifyDevice:
            guard case .dictionary(let dict)? = first else { throw Self.takes(method, "a{sv}") }
            self = .verifyDevice(try DeviceSecret(dict), account: try Self.account(in: dict))
        case .setUpCrossSigning:
            guard case .dictionary(let dict)? = first else { throw Self.takes(method, "a{sv}") }
            if let value = dict["password"], value.typeString != "s" || (value.stringValue?.utf8.count ?? 0) > 1024 {
                throw .invalidArgument(
                    tr(
                        // TRANSLATORS: an error for a program calling Ferry over D-Bus; {key} is the name of an
                        // argument, {type} and {given} are D-Bus types (such as "s").
                        "“{key}” must be of type “{type}”, not “{given}”.",
                        ["key": "password", "type": "s", "given": value.typeString]))
            }
            self = .setUpCrossSigning(password: dict["password"]?.stringValue, account: try Self.account(in: dict))
        case .startEmojiVerification:
            guard case .dictionary(let dict)? = first else { throw Self.takes(method, "a{sv}") }
            if let value = dict["device-id"], value.typeString != "s" || (value.stringValue?.utf8.count ?? 0) > 255 {
                throw .invalidArgument(
                    // TRANSLATORS: an error for a program calling Ferry over D-Bus; {key} is the name of an argument,
                    // {type} a D-Bus type (such as "s").
                    tr("“{key}” must be a device id of type “{type}”.", ["key": "device-id", "type": "s"]))
            }
            self = .startEmojiVerification(
                deviceID: dict["device-id"]?.stringValue, account: try Self.account(in: dict))
        case .answerEmojiVerification:
            guard arguments.count == 2, case .string(let id) = arguments[0], case .bool(let match) = arguments[1] else {
                throw Self.takes(method, "s, b")
            }
            self = .answerEmojiVerification(id: id, match: match)
        case .cancelEmojiVerification: self = .cancelEmojiVerification(id: try Self.string(first, method, "s"))
        case .getEmojiVerification: self = .getEmojiVerification
        case .getAvatar:
            guard arguments.count == 3, case .string(let account) = arguments[0], case .string(let uri) = arguments[1],
                let size = arguments[2].uint32Value
            else { throw Self.takes(method, "s, s, u") }
            guard Destination.kind(of: account) == .userID else {
                // TRANSLATORS: “account” is the name of an argument; keep it as it is.
                throw .invalidArgument(tr("“account” must be a Matrix user id, such as @me:example.org."))
            }
            let media = MediaURI(uri)
            guard uri.isEmpty || media != nil else {
                // TRANSLATORS: an error for a program calling Ferry over D-Bus; “uri” is the name of an argument.
                throw .invalidArgument(tr("“uri” must be an mxc:// URI of a picture, or empty for the account’s own."))
            }
            guard AvatarSizes.allowed.contains(Int(size)) else {
                throw .invalidArgument(
                    // TRANSLATORS: an error for a program calling Ferry over D-Bus; “size” is the name of an argument.
                    tr("“size” must be from {least} to {most} pixels.", ["least": "16", "most": "512"]))
            }
            self = .getAvatar(account: account, uri: media, size: Int(size))
        }
    }

    /// The "account" a call's dictionary names (a user id), if any.
    static func account(in dict: [String: Variant]) throws(ShareError) -> String? {
        guard let value = dict["account"] else { return nil }
        guard value.typeString == "s", let account = value.stringValue, Destination.kind(of: account) == .userID else {
            // TRANSLATORS: “account” is the name of an option; keep it as it is.
            throw .invalidArgument(tr("“account” must be a Matrix user id, such as @me:example.org."))
        }
        return account
    }

    /// The Share1 method it came as; nil for GApplication's `Open`.
    public var method: Share1Method? {
        switch self {
        case .share: return .share
        case .open: return nil
        case .getShare: return .getShare
        case .listShares: return .listShares
        case .cancel: return .cancel
        case .completeShare(_, _, _, let accounts): return accounts == nil ? .completeShare : .completeShareAs
        case .retry: return .retry
        case .signIn: return .signIn
        case .signOut(let account): return account == nil ? .signOut : .signOutAccount
        case .getLoginFlows: return .getLoginFlows
        case .listDestinations: return .listDestinations
        case .getStatus: return .getStatus
        case .verifyDevice: return .verifyDevice
        case .setUpCrossSigning: return .setUpCrossSigning
        case .startEmojiVerification: return .startEmojiVerification
        case .answerEmojiVerification: return .answerEmojiVerification
        case .cancelEmojiVerification: return .cancelEmojiVerification
        case .getEmojiVerification: return .getEmojiVerification
        case .getAvatar: return .getAvatar
        }
    }

    /// Whether answering it waits for the homeserver (it is answered from a task, not the work queue).
    public var waitsForHomeserver: Bool {
        switch self {
        case .signIn, .signOut, .getLoginFlows, .listDestinations, .getStatus, .verifyDevice, .setUpCrossSigning,
            .startEmojiVerification, .answerEmojiVerification, .cancelEmojiVerification, .getEmojiVerification,
            .getAvatar:
            return true
        case .share, .open, .getShare, .listShares, .cancel, .completeShare, .retry:
            return false
        }
    }

    /// Whether it makes a share (answered before the service's start-up is complete).
    public var makesShare: Bool {
        switch self {
        case .share, .open: return true
        default: return false
        }
    }

    /// org.freedesktop.Application.Open(as uris, a{sv} platform_data): one share of every URI.
    private static func open(_ arguments: [Variant]) throws(ShareError) -> Share1Request {
        guard case .strings(let uris)? = arguments.first else {
            // Taken over from GApplication, so no introspection checked the signature.
            throw .invalidArgument(
                tr(
                    // TRANSLATORS: an error for a program calling Ferry over D-Bus; {method} is a D-Bus method's name,
                    // {signature} its D-Bus argument types (such as "as, a{sv}").
                    "{method} takes a list of URIs and a dictionary of platform data ({signature}).",
                    ["method": openMethod, "signature": "as, a{sv}"]))
        }
        let platform = arguments.count > 1 ? arguments[1].dictionaryValue ?? [:] : [:]
        let token = platform["activation-token"]?.stringValue ?? platform["desktop-startup-id"]?.stringValue
        return .open(uris: uris, activationToken: token)
    }

    private static func string(_ argument: Variant?, _ method: String, _ signature: String) throws(ShareError) -> String
    {
        guard case .string(let value)? = argument else { throw takes(method, signature) }
        return value
    }

    private static func takes(_ method: String, _ signature: String) -> ShareError {
        // TRANSLATORS: an error for a program calling Ferry over D-Bus; {method} is a D-Bus method's name, {signature}
        // its D-Bus argument types (such as "s, as, s").
        .invalidArgument(tr("{method} takes ({signature}).", ["method": method, "signature": signature]))
    }

    private static func unimplemented(_ method: String) -> ShareError {
        // GDBus checks calls against the XML, so only a method added there but not here lands here.
        // TRANSLATORS: an error for a program calling Ferry over D-Bus; {method} is a D-Bus method's name.
        .invalidArgument(tr("Ferry does not implement {method} yet.", ["method": method]))
    }
}
