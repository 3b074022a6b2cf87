/// Whether a copy should wait for the reader behind it before pushing bytes it has not taken out
/// of the window (RecentBytes): only while the reader keeps moving, and keeps up a pace worth
/// waiting for. The copy holds up the share's acceptance, so it never waits on a slow network.
/// Times are nanoseconds of a monotonic clock.
struct ReaderPace {
    /// How long since the reader last moved it is still waited for. A reader on a loopback upload
    /// asks for its next 512 KiB within a millisecond or two; now and then it waits longer for
    /// the server to read.
    let patience: UInt64
    /// The slowest average pace, in bytes per second, worth waiting for (below it, reading back
    /// from the disk is the cheaper way).
    let slowest: UInt64
    private(set) var reached: UInt64 = 0
    private var moved: UInt64?
    private var started: UInt64?

    init(patience: UInt64, slowest: UInt64) {
        self.patience = patience
        self.slowest = slowest
    }

    /// The reader asked for the bytes at `offset` at `now`.
    mutating func reader(at offset: UInt64, now: UInt64) {
        if started == nil { started = now }
        guard offset > reached || moved == nil else { return }
        reached = max(reached, offset)
        moved = now
    }

    /// Whether the copy, wanting the reader at `offset`, should wait for it at `now`. The pace is
    /// judged from the reader's start, less one patience for getting going.
    func waits(for offset: UInt64, now: UInt64) -> Bool {
        guard reached < offset, let moved, let started, now &- moved < patience else { return false }
        let judged = Double(now &- started) - Double(patience)
        return Double(reached) >= judged / 1e9 * Double(slowest)
    }
}
