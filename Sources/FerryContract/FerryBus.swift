/// Ferry's service on the session bus: its names, and what its Share1 interface offers.
///
/// The interface XML (data/dbus/io.github.ferryshare.Ferry.Share1.xml) is the one source of
/// truth; these are its names as Swift sees them, checked against it by ContractTests. The
/// service, the command line and the UI all take them from here.
public enum FerryBus {
    /// The service's well-known bus name (also its application id and desktop file name).
    public static let name = "io.github.ferryshare.Ferry"
    /// The object path that carries Share1 and org.freedesktop.Application.
    public static let path = "/io/github/ferryshare/Ferry"
    /// Ferry's own interface: shares, the account, destinations.
    public static let share1 = "io.github.ferryshare.Ferry.Share1"
    /// GApplication's interface: `Open(as uris, a{sv} platform_data)` makes one share of the URIs.
    public static let application = "org.freedesktop.Application"
    /// The standard interface Share1's properties are read and announced through.
    public static let properties = "org.freedesktop.DBus.Properties"
}

/// The methods of Share1.
public enum Share1Method: String, CaseIterable, Sendable {
    /// Makes a share of files, text or a link; answers its id once it is kept on disk.
    case share = "Share"
    /// One share, with its deliveries.
    case getShare = "GetShare"
    /// Every share, newest first.
    case listShares = "ListShares"
    /// Stops a share for good (or says which destinations it came too late for).
    case cancel = "Cancel"
    /// The dialog's choice: where a share waiting for a destination goes, and its message.
    case completeShare = "CompleteShare"
    /// The same, naming the account each destination goes out as (a room two accounts share).
    case completeShareAs = "CompleteShareAs"
    /// Sends a failed share again (only where it did not arrive), or a waiting one now.
    case retry = "Retry"
    /// Signs in with a password, an access token or the browser (single sign-on).
    case signIn = "SignIn"
    /// Signs the account signed in last out; the token is ended at the server.
    case signOut = "SignOut"
    /// Signs one account out, by its user id; the others stay signed in.
    case signOutAccount = "SignOutAccount"
    /// How a homeserver lets people sign in.
    case getLoginFlows = "GetLoginFlows"
    /// Rooms, direct chats and people to share to, recents first, filtered by a query.
    case listDestinations = "ListDestinations"
    /// Who is signed in, where, online or not, and how many shares are in each state.
    case getStatus = "GetStatus"
    /// Verifies Ferry's device with the account's recovery key or passphrase.
    case verifyDevice = "VerifyDevice"
    /// Sets up a cross-signing identity and secret storage for an account that has none.
    case setUpCrossSigning = "SetUpCrossSigning"
    /// Starts verifying Ferry's device by comparing emoji with another of the person's devices.
    case startEmojiVerification = "StartEmojiVerification"
    /// The person's answer to the emoji: they match, or not.
    case answerEmojiVerification = "AnswerEmojiVerification"
    /// Cancels an emoji verification.
    case cancelEmojiVerification = "CancelEmojiVerification"
    /// The emoji verification running or last ended.
    case getEmojiVerification = "GetEmojiVerification"
    /// A room's or a person's picture (or an account's own), as a file in Ferry's cache.
    case getAvatar = "GetAvatar"
}

/// The signals of Share1.
public enum Share1Signal: String, CaseIterable, Sendable {
    /// A share changed (state, progress, deliveries); carries it as GetShare would.
    case shareChanged = "ShareChanged"
    /// An Open could not be taken (Open itself cannot answer with an error): the error and its sentence.
    case shareRefused = "ShareRefused"
    /// Shares wait for a sign-in; carries a sentence saying how many.
    case signInRequired = "SignInRequired"
    /// An emoji verification changed: its state, the emoji to compare, why it ended.
    case emojiVerificationChanged = "EmojiVerificationChanged"
}

/// The properties of Share1.
public enum Share1Property: String, CaseIterable, Sendable {
    /// Whether someone is signed in.
    case signedIn = "SignedIn"
    /// The signed-in Matrix user id, or empty.
    case accountID = "AccountId"
    /// The signed-in account's homeserver URL, or empty.
    case homeserver = "Homeserver"
    /// Whether the homeserver answered the last request.
    case online = "Online"
    /// Whether the account's owner verified Ferry's device: "verified", "unverified",
    /// "no-identity", or empty (signed out, or not known yet).
    case deviceVerification = "DeviceVerification"
    /// The user ids of every signed-in account, the last signed in first.
    case accounts = "Accounts"
}
