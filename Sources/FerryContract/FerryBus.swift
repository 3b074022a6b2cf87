/// Ferry's service on the session bus: its names, and what its Share1 interface offers.
///
/// The interface XML (data/dbus/io.github.ferryshare.Ferry.Share1.xml) is the one source of
/// truth; these are its names as Swift sees them, checked against it by ContractTests. The
/// service, the command line and the UI all take them from here.
public enum FerryBus {
    public static let name = "io.github.ferryshare.Ferry"
    public static let path = "/io/github/ferryshare/Ferry"
    public static let share1 = "io.github.ferryshare.Ferry.Share1"
    /// GApplication's interface: `Open(as uris, a{sv} platform_data)` makes one share of the URIs.
    public static let application = "org.freedesktop.Application"
    public static let properties = "org.freedesktop.DBus.Properties"
}

/// The methods of Share1.
public enum Share1Method: String, CaseIterable, Sendable {
    case share = "Share"
    case getShare = "GetShare"
    case listShares = "ListShares"
    case cancel = "Cancel"
    case completeShare = "CompleteShare"
    case retry = "Retry"
    case signIn = "SignIn"
    case signOut = "SignOut"
    case getLoginFlows = "GetLoginFlows"
    case listDestinations = "ListDestinations"
    case getStatus = "GetStatus"
}

/// The signals of Share1.
public enum Share1Signal: String, CaseIterable, Sendable {
    case shareChanged = "ShareChanged"
    case shareRefused = "ShareRefused"
    case signInRequired = "SignInRequired"
}

/// The properties of Share1.
public enum Share1Property: String, CaseIterable, Sendable {
    case signedIn = "SignedIn"
    case accountID = "AccountId"
    case homeserver = "Homeserver"
    case online = "Online"
}
