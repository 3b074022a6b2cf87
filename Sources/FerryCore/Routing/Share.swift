/// A share as the outbox keeps it: its intent, its state and its history.
public struct Share: Equatable, Sendable {
    /// The share's id (see `ShareID`): what D-Bus, the command line and notifications name it by.
    public var id: String
    /// What is shared, and where to.
    public var intent: ShareIntent
    /// Where the share is in its life.
    public var state: ShareState
    /// Microseconds since the Unix epoch.
    public var created: Int64
    /// When the share last changed, in microseconds since the Unix epoch.
    public var updated: Int64
    /// Why the share failed, when it did.
    public var failure: Failure?
    /// One per destination once the sender has taken the share up, in the order of the destinations.
    public var deliveries: [Delivery]
    /// The Matrix user the share is sent as: whoever was signed in when it was queued (or, for a
    /// share that waited for a sign-in, whoever signed in). Nil until then. A share is never sent
    /// as anyone else: signed in as another person, it waits for its own.
    public var account: String?

    /// Why a share failed, as a D-Bus error name and a sentence.
    public struct Failure: Equatable, Sendable {
        /// The D-Bus error name, such as io.github.ferryshare.Ferry.Error.RoomNotFound.
        public var name: String
        /// The sentence for a person.
        public var message: String
        /// A failure with its error name and sentence.
        public init(name: String, message: String) {
            self.name = name
            self.message = message
        }
    }

    /// A share as intake makes it or the outbox reads it back.
    public init(
        id: String, intent: ShareIntent, state: ShareState, created: Int64, updated: Int64, failure: Failure? = nil,
        deliveries: [Delivery] = [], account: String? = nil
    ) {
        self.deliveries = deliveries
        self.account = account
        self.id = id
        self.intent = intent
        self.state = state
        self.created = created
        self.updated = updated
        self.failure = failure
    }
}
