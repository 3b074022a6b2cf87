import FerryCore
import FerryEncryption

/// What the service announces, as one typed value: the bus object turns each into a signal or a
/// property change, the desktop into a notification or a dialog, the lifetime into staying up
/// (ServiceApplication.run connects them, in one switch). Announced in the order things happened,
/// on the thread that changed them.
public enum ServiceEvent: Sendable {
    /// A share changed (ShareChanged).
    case shareChanged(Share)
    /// Shares wait for a sign-in; the sentence says how many (SignInRequired).
    case signInRequired(reason: String)
    /// Whether Ferry itself has work (queued or sending shares): the process must stay up.
    case pendingWorkChanged(Bool)
    /// SignedIn, AccountId, Homeserver or Online changed.
    case accountChanged
    /// A share waits for a person (to sign in, or to choose where): the dialog's moment.
    case needsPerson(Share, activationToken: String?)
    /// A share is sent or failed, with the names of its destinations for a person.
    case finished(Share, destinationNames: [String])
    /// An emoji verification of this device changed.
    case emojiVerificationChanged(EmojiVerificationState)
}
