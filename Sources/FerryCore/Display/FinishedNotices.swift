/// What the desktop is told when shares finish. Shares that finish one at a time get a notification
/// each; a burst (a queue draining after sign-in, or when the network comes back) gets one that
/// counts them, updated at most once a second — a person who shared 300 files wants to hear that
/// they arrived, not 300 times.
///
/// Pure bookkeeping: the caller shows the notices it gets back and calls `flush` when asked to.
public struct FinishedNotices {
    /// A desktop notification to show, or to replace the one with the same id.
    public struct Notice: Equatable, Sendable {
        /// The notification's id: a later notice with the same id replaces it ("sent", "failed", or a share's).
        public var id: String
        /// The notification's title, such as "Shared".
        public var title: String
        /// The sentence under the title: where the shares went, or why they failed.
        public var body: String
        /// The share a Retry button retries; nil for a notice about several shares.
        public var retryShareID: String?
        /// Whether the notice offers the list of shares (a burst of failures, each with its reason).
        public var showsShares: Bool
    }

    /// Shares finishing less than this apart (µs) belong to one burst.
    public let burstGap: Int64
    /// A burst's notice is updated at most this often (µs).
    public let updateInterval: Int64
    private var sent = Tally()
    private var failed = Tally()

    /// Bookkeeping with the gaps a burst is made of and how often its notice changes, in microseconds.
    public init(burstGap: Int64 = 10_000_000, updateInterval: Int64 = 1_000_000) {
        self.burstGap = burstGap
        self.updateInterval = updateInterval
    }

    private struct Tally {
        var count = 0
        var rooms: [String] = []
        var reasons: Set<String> = []
        var lastFinished: Int64?
        var lastShown: Int64 = 0
        var pending = false

        mutating func add(rooms more: [String], reason: String?, at now: Int64, burstGap: Int64) -> Bool {
            let continues = lastFinished.map { now - $0 < burstGap } ?? false
            if !continues { self = Tally() }
            count += 1
            for room in more where !rooms.contains(room) { rooms.append(room) }
            if let reason { reasons.insert(reason) }
            lastFinished = now
            return continues
        }
    }

    /// A share reached `sent` or `failed` at `now` (µs, any monotonic clock), delivered to the rooms
    /// named. Returns the notice to show now, or nil when it waits for the next `flush`.
    public mutating func finished(_ share: Share, rooms: [String], at now: Int64) -> Notice? {
        switch share.state {
        case .sent:
            guard sent.add(rooms: rooms, reason: nil, at: now, burstGap: burstGap) else {
                sent.lastShown = now
                return Notice(
                    // TRANSLATORS: a notification's title: the shares arrived.
                    id: "sent", title: tr("Shared"), body: Self.sentBody(rooms: rooms), retryShareID: nil,
                    showsShares: false)
            }
            return update(&sent, at: now, summary: sentSummary)
        case .failed:
            let reason = share.failure?.message ?? tr("It could not be delivered.")
            guard failed.add(rooms: rooms, reason: reason, at: now, burstGap: burstGap) else {
                failed.lastShown = now
                return Notice(
                    id: "share-\(share.id)", title: tr("Ferry could not send your share"), body: reason,
                    retryShareID: share.id, showsShares: false)
            }
            return update(&failed, at: now, summary: failedSummary)
        default:
            return nil
        }
    }

    /// The burst notices held back since they were last shown.
    public mutating func flush(at now: Int64) -> [Notice] {
        var notices: [Notice] = []
        if sent.pending { notices.append(update(&sent, at: now, force: true, summary: sentSummary)!) }
        if failed.pending { notices.append(update(&failed, at: now, force: true, summary: failedSummary)!) }
        return notices
    }

    /// Whether a `flush` has something to show.
    public var hasPending: Bool { sent.pending || failed.pending }

    private func update(_ tally: inout Tally, at now: Int64, force: Bool = false, summary: (Tally) -> Notice) -> Notice?
    {
        guard force || now - tally.lastShown >= updateInterval else {
            tally.pending = true
            return nil
        }
        tally.pending = false
        tally.lastShown = now
        return summary(tally)
    }

    private func sentSummary(_ tally: Tally) -> Notice {
        // A burst counts at least two shares.
        let body =
            tally.rooms.isEmpty
            ? trn("{count} share sent to your rooms.", "{count} shares sent to your rooms.", tally.count)
            : trn(
                // TRANSLATORS: {rooms} names one to three rooms, such as "Family, Holiday and 2 more".
                "{count} share sent to {rooms}.", "{count} shares sent to {rooms}.", tally.count,
                ["rooms": Self.list(tally.rooms)])
        // TRANSLATORS: a notification's title: the shares arrived.
        return Notice(id: "sent", title: tr("Shared"), body: body, retryShareID: nil, showsShares: false)
    }

    private func failedSummary(_ tally: Tally) -> Notice {
        let body = tally.reasons.count == 1 ? tally.reasons.first! : tr("Open Ferry to see why, and to retry them.")
        // A burst counts at least two shares.
        return Notice(
            id: "failed",
            title: trn("Ferry could not send {count} share", "Ferry could not send {count} shares", tally.count),
            body: body, retryShareID: nil, showsShares: true)
    }

    /// The body of a notice for one share sent to `rooms`.
    static func sentBody(rooms: [String]) -> String {
        guard !rooms.isEmpty else { return tr("Sent to your rooms.") }
        // TRANSLATORS: {rooms} names one to three rooms, such as "Family, Holiday and 2 more".
        return tr("Sent to {rooms}.", ["rooms": list(rooms)])
    }

    /// "A", "A and B", "A, B and C", "A, B, C and 2 more"; at least one name.
    static func list(_ names: [String]) -> String {
        switch names.count {
        case 0, 1: return names.first ?? ""
        // TRANSLATORS: a list of two room names.
        case 2: return tr("{first} and {second}", ["first": names[0], "second": names[1]])
        // TRANSLATORS: a list of three room names.
        case 3: return tr("{first}, {second} and {third}", ["first": names[0], "second": names[1], "third": names[2]])
        default:
            return trn(
                // TRANSLATORS: a list of three room names and how many more rooms there are.
                "{first}, {second}, {third} and {count} more", "{first}, {second}, {third} and {count} more",
                names.count - 3, ["first": names[0], "second": names[1], "third": names[2]])
        }
    }
}
