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
    /// The account of each destination, in their order, when they are not all `account`'s: a
    /// share may go to the rooms of several accounts, each delivery as its own. Empty when every
    /// destination goes out as `account`.
    public var destinationAccounts: [String]

    /// The account the delivery to the destination at `position` goes out as.
    public func account(at position: Int) -> String? {
        destinationAccounts.indices.contains(position) ? destinationAccounts[position] : account
    }

    /// Every account the share goes out as, `account` first, each once.
    public var accounts: [String] {
        var seen: Set<String> = []
        return ([account].compactMap { $0 } + destinationAccounts).filter { seen.insert($0).inserted }
    }

    /// The accounts of the deliveries still to make: each of `accounts` until the sender has
    /// taken the share up (a share waiting for a sign-in waits for one of these).
    public var accountsStillSending: [String] {
        guard !deliveries.isEmpty else { return accounts }
        var seen: Set<String> = []
        return deliveries.indices.filter { !deliveries[$0].state.isFinal }.compactMap { account(at: $0) }
            .filter { seen.insert($0).inserted }
    }

    /// The account a share waiting for a sign-in waits for: the first whose deliveries are still
    /// to make (a share to several accounts' rooms waits for the one whose are left).
    public var awaitedAccount: String? { accountsStillSending.first ?? account }

    /// `accounts` of one account per destination: the first is the share's account, and the list
    /// is kept only when it names more than one.
    public static func destinationAccounts(_ accounts: [String]) -> (account: String?, perDestination: [String]) {
        guard let first = accounts.first else { return (nil, []) }
        return (first, accounts.allSatisfy { $0 == first } ? [] : accounts)
    }

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
        deliveries: [Delivery] = [], account: String? = nil, destinationAccounts: [String] = []
    ) {
        self.deliveries = deliveries
        self.account = account
        self.destinationAccounts = destinationAccounts
        self.id = id
        self.intent = intent
        self.state = state
        self.created = created
        self.updated = updated
        self.failure = failure
    }
}
