import FerryContract
import FerryCore
import GLibAdapter

/// A share as the service describes it (GetShare, ListShares, ShareChanged): what a window shows.
/// Decoded from the a{sv} documented in the Share1 interface XML; keys it does not know are ignored.
public struct ShareSnapshot: Equatable {
    public var id: String
    public var state: ShareState
    public var items: [ShareItem]
    public var subject: String?
    public var message: String?
    public var destinations: [String]
    /// What a ferry: link named: preselected on the first page, never sent to without the person.
    public var suggestedDestinations: [String] = []
    public var errorName: String?
    public var errorMessage: String?
    public var deliveries: [Delivery]
    /// Microseconds since the Unix epoch.
    public var updated: Int64
    /// The Matrix user it is sent as, once queued (a share waits for its own person to sign in).
    public var account: String?

    /// One destination's progress, once the share is queued.
    public struct Delivery: Equatable {
        public var destination: String
        public var state: String
        public var bytesSent: UInt64
        public var bytesTotal: UInt64
        public var errorName: String?
        public var errorMessage: String?
    }

    /// The share as the service describes it, read with the contract's one codec (ShareCodec).
    public init?(_ dict: [String: Variant]) {
        guard let share = ShareCodec.decode(dict) else { return nil }
        self.init(share)
    }

    public init(_ share: Share) {
        id = share.id
        state = share.state
        items = share.intent.items
        subject = share.intent.subject
        message = share.intent.message
        destinations = share.intent.destinations
        suggestedDestinations = share.intent.suggestedDestinations
        errorName = share.failure?.name
        errorMessage = share.failure?.message
        updated = share.updated
        // Who it waits for, when it waits for a sign-in; who sends it otherwise.
        account = share.state == .awaitingSignIn ? share.awaitedAccount : share.account
        deliveries = share.deliveries.map { delivery in
            Delivery(
                destination: delivery.destination, state: delivery.state.rawValue, bytesSent: delivery.bytesSent,
                bytesTotal: delivery.bytesTotal, errorName: delivery.failure?.name,
                errorMessage: delivery.failure?.message)
        }
    }

    public var files: [ShareItem] { items.filter { $0.kind == .file } }
    public var text: String? { items.first { $0.kind == .text }?.text }
    public var link: String? { items.first { $0.kind == .link }?.text }

    /// A line that names the share for a person: "photo.png", "3 files", the link, the text's start.
    public var title: String {
        let files = self.files
        if files.count == 1 { return SafeDisplay.escaped(files[0].name) }
        if files.count > 1 { return trn("{count} file", "{count} files", files.count) }
        if let link { return SafeDisplay.escaped(link) }
        if let text {
            let line = text.split(whereSeparator: \.isNewline).first.map(String.init) ?? text
            return SafeDisplay.escaped(line.count > 60 ? String(line.prefix(59)) + "…" : line)
        }
        // TRANSLATORS: the name of a share (a noun) that has neither files, a link nor a text.
        return subject.map(SafeDisplay.escaped) ?? trc("a share", "Share")
    }

    /// Why it failed, for a person: the first failed delivery's reason, or the share's.
    public var failureMessage: String? {
        deliveries.first { $0.state == "failed" && $0.errorMessage != nil }?.errorMessage ?? errorMessage
    }

    /// The share's state in words.
    public var stateDescription: String {
        switch state {
        case .awaitingSignIn:
            // TRANSLATORS: {account} is a Matrix user id, "@someone:example.org".
            return account.map { tr("Waiting for {account} to sign in", ["account": SafeDisplay.escaped($0)]) }
                ?? tr("Waiting for sign-in")
        case .awaitingDestination: return tr("Waiting for a destination")
        case .queued: return trc("share state", "Queued")
        case .sending:
            if isRetrying { return trc("share state", "Waiting to retry") }
            let (sent, total) = progress
            return total > 0
                // TRANSLATORS: a share's state; {sent} and {total} are sizes, "1.5 MB".
                ? tr("Sending ({sent} of {total})", ["sent": ByteCount.format(sent), "total": ByteCount.format(total)])
                : trc("share state", "Sending")
        case .sent: return trc("share state", "Sent")
        case .failed:
            // TRANSLATORS: a share's state; {reason} is a sentence saying why.
            return failureMessage.map { tr("Failed: {reason}", ["reason": $0]) } ?? trc("share state", "Failed")
        case .cancelled: return trc("share state", "Cancelled")
        }
    }

    /// The state while the share is queued or sending, as a line under the dialog's message that
    /// says it goes on ("Sending (1.5 MB of 3 MB)…"); nil in the other states.
    public var progressDescription: String? {
        switch state {
        case .queued: return tr("Queued…")
        case .sending:
            if isRetrying { return tr("Waiting to retry…") }
            let (sent, total) = progress
            return total > 0
                ? tr(
                    // TRANSLATORS: the share is being sent; {sent} and {total} are sizes, "1.5 MB".
                    "Sending ({sent} of {total})…", ["sent": ByteCount.format(sent), "total": ByteCount.format(total)])
                : tr("Sending…")
        default: return nil
        }
    }

    private var isRetrying: Bool { deliveries.contains { $0.state == "retrying" } }

    /// Bytes sent and to send, over every destination.
    private var progress: (sent: UInt64, total: UInt64) {
        deliveries.reduce((sent: UInt64(0), total: UInt64(0))) { ($0.sent + $1.bytesSent, $0.total + $1.bytesTotal) }
    }
}
