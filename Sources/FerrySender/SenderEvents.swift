import FerryCore

/// What the sender tells the service about, in order, to become D-Bus signals and notifications:
/// `Sender.events`, read by the one service that owns the sender.
public enum SenderEvent: Sendable {
    /// A share's state or one of its deliveries changed (progress included, throttled).
    case shareChanged(Share)
    /// A share is sent or failed: the moment for a notification.
    case finished(Share)
    /// The homeserver ended the sign-in of `userID`; that account's shares wait for its next one.
    case signedOut(userID: String)
    /// Whether the homeserver answered the last request.
    case onlineChanged(Bool)
}
