import FerryCore
import GLibAdapter

/// What `SignIn` answers: who is signed in now, where, as which device.
public struct SignedInAccount: Equatable, Sendable {
    public var userID: String
    public var homeserver: String
    public var deviceID: String

    public init(userID: String, homeserver: String, deviceID: String) {
        self.userID = userID
        self.homeserver = homeserver
        self.deviceID = deviceID
    }

    public var dictionary: [String: Variant] {
        ["user-id": .string(userID), "homeserver": .string(homeserver), "device-id": .string(deviceID)]
    }

    public init(_ dict: [String: Variant]) {
        userID = dict["user-id"]?.stringValue ?? ""
        homeserver = dict["homeserver"]?.stringValue ?? ""
        deviceID = dict["device-id"]?.stringValue ?? ""
    }
}

/// What `SetUpCrossSigning` answers: the new recovery key (shown once) and the device's verification.
public struct CrossSigningSetUp: Equatable, Sendable {
    public var recoveryKey: String
    /// "verified", "unverified", "no-identity", or empty.
    public var verification: String

    public init(recoveryKey: String, verification: String) {
        self.recoveryKey = recoveryKey
        self.verification = verification
    }

    public var dictionary: [String: Variant] {
        ["recovery-key": .string(recoveryKey), "verification": .string(verification)]
    }

    public init(_ dict: [String: Variant]) {
        recoveryKey = dict["recovery-key"]?.stringValue ?? ""
        verification = dict["verification"]?.stringValue ?? ""
    }
}

/// One signed-in account, as `GetStatus` lists it under "accounts" and `ferry accounts` shows it.
public struct AccountListing: Equatable, Sendable {
    public var userID: String
    public var homeserver: String
    public var deviceID: String
    /// "verified", "unverified", "no-identity", or nil when not known.
    public var deviceVerification: String?
    /// The network is up and the account's homeserver answered last time.
    public var online: Bool

    public init(userID: String, homeserver: String, deviceID: String, deviceVerification: String?, online: Bool) {
        self.userID = userID
        self.homeserver = homeserver
        self.deviceID = deviceID
        self.deviceVerification = deviceVerification
        self.online = online
    }

    public var dictionary: [String: Variant] {
        [
            "user-id": .string(userID), "homeserver": .string(homeserver), "device-id": .string(deviceID),
            "device-verification": .string(deviceVerification ?? ""), "online": .bool(online),
        ]
    }

    /// Reads one entry back; nil without a user id.
    public init?(_ dict: [String: Variant]) {
        guard let userID = dict["user-id"]?.stringValue, !userID.isEmpty else { return nil }
        self.userID = userID
        homeserver = dict["homeserver"]?.stringValue ?? ""
        deviceID = dict["device-id"]?.stringValue ?? ""
        deviceVerification = dict["device-verification"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
        online = dict["online"]?.boolValue ?? false
    }
}

/// What `GetStatus` answers: who is signed in, where, online or not, the device, and how many
/// shares are in each state. Empty strings on the bus are nil here.
public struct StatusReport: Equatable, Sendable {
    public var signedIn: Bool
    public var userID: String?
    public var homeserver: String?
    public var online: Bool
    /// Where the sign-in is kept: "secret-service" or "file".
    public var secretStorage: String?
    public var deviceID: String?
    /// "verified", "unverified", "no-identity", or nil when not known.
    public var deviceVerification: String?
    /// Every state's count, the states by their contract names.
    public var shares: [String: Int]
    /// Every signed-in account (the fields above are the one an account-less call speaks as).
    public var accounts: [AccountListing]

    public init(
        signedIn: Bool, userID: String?, homeserver: String?, online: Bool, secretStorage: String?,
        deviceID: String?, deviceVerification: String?, shares: [ShareState: Int], accounts: [AccountListing]
    ) {
        self.accounts = accounts
        self.signedIn = signedIn
        self.userID = userID
        self.homeserver = homeserver
        self.online = online
        self.secretStorage = secretStorage
        self.deviceID = deviceID
        self.deviceVerification = deviceVerification
        self.shares = Dictionary(uniqueKeysWithValues: ShareState.allCases.map { ($0.rawValue, shares[$0] ?? 0) })
    }

    /// The same report as `userID`'s account speaks (`ferry status --account`): its user,
    /// server, device and link; the share counts stay everyone's. Unchanged for an account that is
    /// not signed in.
    public func speaking(as userID: String) -> StatusReport {
        guard let account = accounts.first(where: { $0.userID == userID }) else { return self }
        var report = self
        report.userID = account.userID
        report.homeserver = account.homeserver
        report.deviceID = account.deviceID
        report.deviceVerification = account.deviceVerification
        report.online = account.online
        report.accounts = [account]
        return report
    }

    public var dictionary: [String: Variant] {
        [
            "signed-in": .bool(signedIn),
            "user-id": .string(userID ?? ""),
            "homeserver": .string(homeserver ?? ""),
            "online": .bool(online),
            "secret-storage": .string(secretStorage ?? ""),
            "device-id": .string(deviceID ?? ""),
            "device-verification": .string(deviceVerification ?? ""),
            "shares": .dictionary(shares.mapValues { .uint32(UInt32(clamping: $0)) }),
            "accounts": .dictionaries(accounts.map(\.dictionary)),
        ]
    }

    public init(_ dict: [String: Variant]) {
        func nonEmpty(_ key: String) -> String? {
            guard let text = dict[key]?.stringValue, !text.isEmpty else { return nil }
            return text
        }
        signedIn = dict["signed-in"]?.boolValue ?? false
        userID = nonEmpty("user-id")
        homeserver = nonEmpty("homeserver")
        online = dict["online"]?.boolValue ?? false
        secretStorage = nonEmpty("secret-storage")
        deviceID = nonEmpty("device-id")
        deviceVerification = nonEmpty("device-verification")
        shares = (dict["shares"]?.dictionaryValue ?? [:]).mapValues { Int($0.uint32Value ?? 0) }
        if let listed = dict["accounts"]?.dictionariesValue {
            accounts = listed.compactMap(AccountListing.init)
        } else if signedIn, let userID {
            // A service older than several accounts says its one account in the fields above.
            accounts = [
                AccountListing(
                    userID: userID, homeserver: homeserver ?? "", deviceID: deviceID ?? "",
                    deviceVerification: deviceVerification, online: online)
            ]
        } else {
            accounts = []
        }
    }
}

/// What `GetLoginFlows` answers: how a homeserver lets people sign in.
public struct LoginFlows: Equatable, Sendable {
    /// The homeserver's URL as discovered (after .well-known).
    public var homeserver: String
    /// Whether it takes a user name and password.
    public var password: Bool
    /// Whether it offers single sign-on in the browser.
    public var sso: Bool
    /// Whether it takes a login token (`m.login.token`).
    public var token: Bool
    /// Whether the browser sign-in is the OAuth 2.0 API (Matrix 1.15).
    public var oauth: Bool
    /// Whether the browser can open at "create an account" (`create-account` in SignIn).
    public var createAccount: Bool
    /// Where the person manages their account in the browser, if the server says.
    public var accountManagement: String?

    public init(
        homeserver: String, password: Bool, sso: Bool, token: Bool, oauth: Bool = false, createAccount: Bool = false,
        accountManagement: String? = nil
    ) {
        self.homeserver = homeserver
        self.password = password
        self.sso = sso
        self.token = token
        self.oauth = oauth
        self.createAccount = createAccount
        self.accountManagement = accountManagement
    }

    public var dictionary: [String: Variant] {
        var dictionary: [String: Variant] = [
            "homeserver": .string(homeserver), "password": .bool(password), "sso": .bool(sso), "token": .bool(token),
            "oauth": .bool(oauth), "create-account": .bool(createAccount),
        ]
        if let accountManagement { dictionary["account-management"] = .string(accountManagement) }
        return dictionary
    }

    /// `asked`: the address the question was about, for an answer without `homeserver`.
    public init(_ dict: [String: Variant], asked: String) {
        homeserver = dict["homeserver"]?.stringValue ?? asked
        password = dict["password"]?.boolValue ?? true
        sso = dict["sso"]?.boolValue ?? false
        token = dict["token"]?.boolValue ?? false
        oauth = dict["oauth"]?.boolValue ?? false
        createAccount = dict["create-account"]?.boolValue ?? false
        accountManagement = dict["account-management"]?.stringValue
    }
}

/// Who is signed in and whether the homeserver answers: the Share1 properties.
public struct AccountState: Equatable, Sendable {
    public init() {}

    public var signedIn = false
    public var accountID = ""
    public var homeserver = ""
    /// Assumed until the service says otherwise, so an older service shows no offline banner.
    public var online = true
    /// "verified", "unverified", "no-identity", or "" (not known).
    public var deviceVerification = ""
    /// Every signed-in account's user id, the last signed in first.
    public var accounts: [String] = []

    /// Takes what `properties` (all of them, or a PropertiesChanged's few) says; the rest stays.
    public mutating func update(_ properties: [String: Variant]) {
        func value(_ property: Share1Property) -> Variant? { properties[property.rawValue] }
        if let value = value(.deviceVerification)?.stringValue { deviceVerification = value }
        if let value = value(.signedIn)?.boolValue { signedIn = value }
        if let value = value(.accountID)?.stringValue { accountID = value }
        if let value = value(.homeserver)?.stringValue { homeserver = value }
        if let value = value(.online)?.boolValue { online = value }
        if let value = value(.accounts)?.stringsValue { accounts = value }
    }
}
