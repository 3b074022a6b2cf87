/// One destination of a share and how far its delivery has come. A share with three
/// destinations has three deliveries, each sent, retried or failed on its own.
public struct Delivery: Equatable, Sendable {
    /// Where one destination's delivery is. Raw values are the strings of the D-Bus API and the database.
    public enum State: String, Sendable, CaseIterable {
        /// Not begun yet; or its requests are going out now.
        case queued, sending
        /// A transient failure (network, server away, rate limit): tried again at `retryAt`.
        case retrying
        /// Every event of the share is in the room; or it gave up, with `failure` saying why.
        case sent, failed

        /// Nothing more happens to this delivery by itself.
        public var isFinal: Bool { self == .sent || self == .failed }
    }

    /// The destination as the person named it: a room id, an alias or a user id.
    public var destination: String
    /// The room the destination resolved to (an alias's room, a person's direct chat), once known.
    public var roomID: String?
    /// How far the delivery has come.
    public var state: State
    /// Bytes of the share's files uploaded for this destination so far.
    public var bytesSent: UInt64
    /// Bytes of all the share's files: what `bytesSent` reaches when every upload is done.
    public var bytesTotal: UInt64
    /// Events of the share that are in the room (they have an event id).
    public var eventsSent: Int
    /// Events the share becomes (see `Composition.steps(for:)`).
    public var eventsTotal: Int
    /// Why it failed or why it waits to retry: a D-Bus error name and a sentence; nil while all is well.
    public var failure: Share.Failure?
    /// Microseconds since the Unix epoch, while retrying.
    public var retryAt: Int64?
    /// Transient failures in a row, for the backoff.
    public var attempts: Int
    /// The sign-in (a number that grows with each) under which the sender last began this
    /// delivery's requests. A server scopes transaction ids to a device and forgets them when it
    /// signs out, so under a later sign-in the sender looks in the room before sending again.
    public var signIn: Int64?

    /// A delivery as the outbox reads it back, or a new one for `destination` (queued, nothing sent).
    public init(
        destination: String, roomID: String? = nil, state: State = .queued, bytesSent: UInt64 = 0,
        bytesTotal: UInt64 = 0, eventsSent: Int = 0, eventsTotal: Int = 0, failure: Share.Failure? = nil,
        retryAt: Int64? = nil, attempts: Int = 0, signIn: Int64? = nil
    ) {
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
    /// The share's state from its deliveries' (queued when it has none yet).
    public static func shareState(of deliveries: [Delivery]) -> ShareState {
        guard !deliveries.isEmpty else { return .queued }
        if deliveries.allSatisfy({ $0.state == .sent }) { return .sent }
        if deliveries.allSatisfy(\.state.isFinal) { return .failed }
        return .sending
    }
}
