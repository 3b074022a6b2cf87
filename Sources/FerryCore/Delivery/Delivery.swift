/// One destination of a share and how far its delivery has come. A share with three
/// destinations has three deliveries, each sent, retried or failed on its own.
public struct Delivery: Equatable, Sendable {
    public enum State: String, Sendable, CaseIterable {
        case queued, sending
        /// A transient failure (network, server away, rate limit): tried again at `retryAt`.
        case retrying
        case sent, failed

        public var isFinal: Bool { self == .sent || self == .failed }
    }

    public var destination: String
    /// The room the destination resolved to (an alias's room, a person's direct chat), once known.
    public var roomID: String?
    public var state: State
    public var bytesSent: UInt64
    public var bytesTotal: UInt64
    public var eventsSent: Int
    public var eventsTotal: Int
    public var failure: Share.Failure?
    /// Microseconds since the Unix epoch, while retrying.
    public var retryAt: Int64?
    /// Transient failures in a row, for the backoff.
    public var attempts: Int
    /// The sign-in (a number that grows with each) under which the sender last began this
    /// delivery's requests. A server scopes transaction ids to a device and forgets them when it
    /// signs out, so under a later sign-in the sender looks in the room before sending again.
    public var signIn: Int64?

    public init(destination: String, roomID: String? = nil, state: State = .queued, bytesSent: UInt64 = 0,
                bytesTotal: UInt64 = 0, eventsSent: Int = 0, eventsTotal: Int = 0, failure: Share.Failure? = nil,
                retryAt: Int64? = nil, attempts: Int = 0, signIn: Int64? = nil) {
        self.destination = destination
        self.roomID = roomID
        self.state = state
        self.bytesSent = bytesSent
        self.bytesTotal = bytesTotal
        self.eventsSent = eventsSent
        self.eventsTotal = eventsTotal
        self.failure = failure
        self.retryAt = retryAt
        self.attempts = attempts
        self.signIn = signIn
    }
}

/// The share's state once its deliveries have moved: sent when every one arrived, failed when
/// none is left to try and one failed, sending otherwise.
public enum DeliveryOutcome {
    public static func shareState(of deliveries: [Delivery]) -> ShareState {
        guard !deliveries.isEmpty else { return .queued }
        if deliveries.allSatisfy({ $0.state == .sent }) { return .sent }
        if deliveries.allSatisfy(\.state.isFinal) { return .failed }
        return .sending
    }
}
