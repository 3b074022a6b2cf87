/// What the crash witness's notes say: which shares were being sent when the service crashed,
/// and how often. A share that crashed the service `limit` times is failed instead of sent again,
/// so that one poisonous share cannot keep the service (and every other share) in a crash loop.
///
/// A kill or a power cut leaves no note (only crash signals write one), so a share interrupted
/// that way is simply resumed, however often it happens.
public struct CrashTally: Equatable, Sendable {
    /// The crashes a share may cause before it is given up.
    public static let limit = 3

    /// Crashes per share id, for the shares still worth counting.
    public private(set) var crashes: [String: Int]

    /// Reads the notes (one share id a line); ids not in `unfinished` are dropped, as settled.
    public init(notes: String, unfinished: Set<String>) {
        var crashes: [String: Int] = [:]
        for line in notes.split(separator: "\n") where unfinished.contains(String(line)) {
            crashes[String(line), default: 0] += 1
        }
        self.crashes = crashes
    }

    /// The shares to give up now, in a stable order.
    public var givenUp: [String] { crashes.filter { $0.value >= Self.limit }.map(\.key).sorted() }

    /// The notes to keep for the next start: the shares still being tried, as often as they crashed.
    public var remainingNotes: String {
        crashes.filter { $0.value < Self.limit }.sorted { $0.key < $1.key }
            .map { String(repeating: $0.key + "\n", count: $0.value) }.joined()
    }

    /// Why a share given up failed, for the person, in their language.
    public static var reason: String {
        trn(
            // TRANSLATORS: the reason in "Sending to {room} failed: {reason}."; "it" is the share.
            "Ferry stopped unexpectedly {count} time while sending it, so it was set aside to let other shares go",
            "Ferry stopped unexpectedly {count} times while sending it, so it was set aside to let other shares go",
            limit)
    }
}
