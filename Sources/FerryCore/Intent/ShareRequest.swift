/// What a client asked to share, before anything was checked: the fields of `Share(a{sv})`,
/// of `Open(uris)`, of a `ferry:` URI and of the command line, in one shape.
public struct ShareRequest: Equatable, Sendable {
    /// Files and links by URI (`file:`, any scheme GIO reads, `https:`, a `ferry:` link).
    public var uris: [String]
    /// A text to share.
    public var text: String?
    /// A subject, such as a page's title.
    public var subject: String?
    /// The person's own message, sent before the items.
    public var message: String?
    /// Where to send it, as given; checked by `SharePlan`.
    public var destinations: [String]
    /// How the request reached Ferry.
    public var source: IntakeSource
    /// The account (a user id) it goes out as; nil: the one signed in last.
    public var account: String?

    /// A request with the fields given; nothing is checked yet.
    public init(
        uris: [String] = [], text: String? = nil, subject: String? = nil, message: String? = nil,
        destinations: [String] = [], source: IntakeSource, account: String? = nil
    ) {
        self.account = account
        self.uris = uris
        self.text = text
        self.subject = subject
        self.message = message
        self.destinations = destinations
        self.source = source
    }
}

/// How a share reached Ferry.
public enum IntakeSource: String, Sendable, Codable, CaseIterable {
    /// org.freedesktop.Application.Open (file managers, `gio open`, `xdg-open`).
    case open
    /// Share1.Share over D-Bus.
    case share
    /// A `ferry:` URI.
    case uri
    /// The `ferry` command line.
    case cli
}

/// The limits a share must fit in. Defaults suit a desktop; the service reads overrides from its environment.
public struct Limits: Equatable, Sendable {
    /// The most files and links in one share.
    public var maxItems: Int
    /// The largest file, in bytes.
    public var maxFileSize: UInt64
    /// The longest text or message, in UTF-8 bytes.
    public var maxTextBytes: Int
    /// The longest subject, in UTF-8 bytes.
    public var maxSubjectBytes: Int
    /// The most destinations for one share.
    public var maxDestinations: Int
    /// Free space the spool's file system keeps after a share's copies: a share that would eat
    /// into it is refused (NotEnoughSpace), so Ferry never fills the disk the desktop runs on.
    public var diskReserve: UInt64 = 64 << 20
    /// How long a non-local file (GVfs, a network mount) may go without sending a byte before its
    /// share fails (RemoteReadFailed): less than a D-Bus client's usual 25 s wait for the answer.
    public var remoteStallSeconds: Int = 20

    /// Limits for a desktop: 1000 items, 4 GiB a file, 32 KiB of text, 1 KiB of subject, 100 destinations.
    public init(
        maxItems: Int = 1000, maxFileSize: UInt64 = 4 << 30, maxTextBytes: Int = 32768,
        maxSubjectBytes: Int = 1024, maxDestinations: Int = 100
    ) {
        self.maxItems = maxItems
        self.maxFileSize = maxFileSize
        self.maxTextBytes = maxTextBytes
        self.maxSubjectBytes = maxSubjectBytes
        self.maxDestinations = maxDestinations
    }

    /// Limits with overrides from `FERRY_MAX_ITEMS`, `FERRY_MAX_FILE_SIZE`, `FERRY_DISK_RESERVE` and
    /// `FERRY_REMOTE_STALL_SECONDS`;
    /// malformed values are ignored.
    public static func fromEnvironment(_ environment: [String: String]) -> Limits {
        var limits = Limits()
        if let value = environment["FERRY_MAX_ITEMS"].flatMap(Int.init), value > 0 { limits.maxItems = value }
        if let value = environment["FERRY_MAX_FILE_SIZE"].flatMap(UInt64.init), value > 0 { limits.maxFileSize = value }
        if let value = environment["FERRY_DISK_RESERVE"].flatMap(UInt64.init) { limits.diskReserve = value }
        if let value = environment["FERRY_REMOTE_STALL_SECONDS"].flatMap(Int.init), value > 0, value <= 3600 {
            limits.remoteStallSeconds = value
        }
        return limits
    }
}
