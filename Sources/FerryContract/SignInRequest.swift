import FerryCore
import GLibAdapter

/// `SignIn(a{sv})`'s argument: the homeserver, and a password, an access token or the browser.
public struct SignInRequest: Equatable, Sendable {
    public enum Method: Equatable, Sendable {
        case password(user: String, password: String)
        case accessToken(String)
        /// In the person's browser: the OAuth 2.0 API where the homeserver offers it, single
        /// sign-on otherwise. `createAccount` opens the server's page at "create an account".
        case browser(createAccount: Bool = false)
    }

    public var homeserver: String
    public var method: Method

    public init(homeserver: String, method: Method) {
        self.homeserver = homeserver
        self.method = method
    }

    /// The dictionary as the interface XML documents it.
    public var dictionary: [String: Variant] {
        switch method {
        case .password(let user, let password):
            return ["homeserver": .string(homeserver), "user": .string(user), "password": .string(password)]
        case .accessToken(let token): return ["homeserver": .string(homeserver), "access-token": .string(token)]
        case .browser(let createAccount):
            var dictionary: [String: Variant] = ["homeserver": .string(homeserver), "sso": .bool(true)]
            if createAccount { dictionary["create-account"] = .bool(true) }
            return dictionary
        }
    }

    static let keyTypes = [
        "homeserver": "s", "user": "s", "password": "s", "access-token": "s", "sso": "b", "create-account": "b",
    ]

    /// Reads the dictionary; a key of the wrong type or a missing part is `InvalidArgument`.
    public init(_ dict: [String: Variant]) throws(ShareError) {
        for (key, value) in dict {
            if let expected = Self.keyTypes[key], value.typeString != expected {
                throw .invalidArgument(
                    tr(
                        // TRANSLATORS: an error for a program calling Ferry over D-Bus; {key} is the name of an
                        // argument, {type} and {given} are D-Bus types (such as "s").
                        "“{key}” must be of type “{type}”, not “{given}”.",
                        ["key": key, "type": expected, "given": value.typeString]))
            }
        }
        guard let homeserver = dict["homeserver"]?.stringValue, !homeserver.trimmingWhitespace().isEmpty else {
            // TRANSLATORS: {key} is the name of a D-Bus argument ("homeserver"), as it is.
            throw .invalidArgument(tr("Say which homeserver to sign in to (“{key}”).", ["key": "homeserver"]))
        }
        self.homeserver = homeserver
        if dict["create-account"]?.boolValue == true, dict["access-token"] != nil {
            throw .invalidArgument(
                tr(
                    // TRANSLATORS: {create} and {token} are names of D-Bus arguments ("create-account",
                    // "access-token"), as they are.
                    "“{create}” opens the homeserver's page in the browser; give it without “{token}”.",
                    ["create": "create-account", "token": "access-token"]))
        }
        if let token = dict["access-token"]?.stringValue {
            guard !token.isEmpty else { throw .invalidArgument(tr("The access token is empty.")) }
            method = .accessToken(token)
        } else if dict["create-account"]?.boolValue == true, dict["user"] != nil || dict["password"] != nil {
            throw .invalidArgument(
                tr(
                    // TRANSLATORS: {create}, {user} and {password} are names of D-Bus arguments ("create-account",
                    // "user", "password"), as they are.
                    "“{create}” opens the homeserver's page in the browser; give it without “{user}” and “{password}”.",
                    ["create": "create-account", "user": "user", "password": "password"]))
        } else if dict["sso"]?.boolValue == true || dict["create-account"]?.boolValue == true {
            // Creating an account happens in the browser: "create-account" alone means it too.
            method = .browser(createAccount: dict["create-account"]?.boolValue == true)
        } else {
            guard let user = dict["user"]?.stringValue, !user.isEmpty, let password = dict["password"]?.stringValue
            else {
                throw .invalidArgument(
                    tr(
                        // TRANSLATORS: {user}, {password} and {token} are names of D-Bus arguments ("user", "password",
                        // "access-token"), as they are.
                        "Give “{user}” and “{password}”, or “{token}”.",
                        ["user": "user", "password": "password", "token": "access-token"]))
            }
            method = .password(user: user, password: password)
        }
    }
}

/// `VerifyDevice(a{sv})`'s argument: the account's recovery key, its passphrase, or either.
public enum DeviceSecret: Equatable, Sendable {
    case recoveryKey(String)
    case passphrase(String)
    /// Typed by a person who did not say which: tried as a key first.
    case either(String)

    /// The dictionary as the interface XML documents it.
    public var dictionary: [String: Variant] {
        switch self {
        case .recoveryKey(let key): return ["recovery-key": .string(key)]
        case .passphrase(let passphrase): return ["passphrase": .string(passphrase)]
        case .either(let text): return ["key-or-passphrase": .string(text)]
        }
    }

    /// Exactly one of "recovery-key", "passphrase" and "key-or-passphrase", a string.
    public init(_ dict: [String: Variant]) throws(ShareError) {
        let kinds = ["recovery-key", "passphrase", "key-or-passphrase"]
        for (key, value) in dict where kinds.contains(key) && value.typeString != "s" {
            throw .invalidArgument(
                tr(
                    // TRANSLATORS: an error for a program calling Ferry over D-Bus; {key} is the name of an argument,
                    // {type} and {given} are D-Bus types (such as "s").
                    "“{key}” must be of type “{type}”, not “{given}”.",
                    ["key": key, "type": "s", "given": value.typeString]))
        }
        let given = kinds.compactMap { kind in dict[kind]?.stringValue.map { (kind, $0) } }
        guard given.count == 1, let (kind, text) = given.first else {
            throw .invalidArgument(
                tr(
                    // TRANSLATORS: {key}, {passphrase} and {either} are names of D-Bus arguments ("recovery-key",
                    // "passphrase", "key-or-passphrase"), as they are.
                    "Give one of “{key}”, “{passphrase}” and “{either}”.",
                    ["key": "recovery-key", "passphrase": "passphrase", "either": "key-or-passphrase"]))
        }
        guard !text.trimmingWhitespace().isEmpty else {
            throw .invalidArgument(tr("Enter your recovery key or passphrase."))
        }
        // Recovery keys are 48 characters and passphrases are typed by people: more is not either,
        // and decoding base58 takes time that grows with the square of its length.
        guard text.utf8.count <= 1024 else {
            throw .invalidArgument(tr("That is too long to be a recovery key or passphrase."))
        }
        switch kind {
        case "recovery-key": self = .recoveryKey(text)
        case "passphrase": self = .passphrase(text)
        default: self = .either(text)
        }
    }
}
