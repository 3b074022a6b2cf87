import FerryCore

/// What the sender tells the service about, to become D-Bus signals and notifications.
public struct SenderEvents: Sendable {
    /// A share's state or one of its deliveries changed (progress included, throttled).
    public var shareChanged: @Sendable (Share) -> Void = { _ in }
    /// A share is sent or failed: the moment for a notification.
    public var finished: @Sendable (Share) -> Void = { _ in }
    /// The homeserver ended the sign-in; the sender's shares wait for the next one.
    public var signedOut: @Sendable () -> Void = {}
    /// Whether the homeserver answered the last request.
    public var onlineChanged: @Sendable (Bool) -> Void = { _ in }
    /// The share now being sent (nil: none), for the crash witness.
    public var working: @Sendable (_ shareID: String?) -> Void = { _ in }

    public init() {}
}
