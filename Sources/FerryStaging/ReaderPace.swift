/// Whether a copy should wait for the reader behind it before pushing bytes it has not taken out
/// of the window (RecentBytes): only while the reader keeps moving, at no less than half the
/// copy's own pace. Waiting for it never makes the upload end later (reading back from the disk
/// is what slowed it), but it holds up the share's acceptance: to about twice the time the copy
/// takes alone (more by a late reader's catching up, GrowingFile.reach), and never for a stalled
/// or slow network. Times are nanoseconds of a monotonic clock.
struct ReaderPace {
    /// How long since the reader last moved it is still waited for. A reader on a loopback upload
    /// asks for its next chunk almost at once (docs/PERFORMANCE.md); now and then it waits longer
    /// for the server to read.
    let patience: UInt64
    /// The share of the copy's own pace a reader must keep up to be waited for.
    let share: Double
    private(set) var reached: UInt64 = 0
    private var moved: UInt64?
    private var started: UInt64?
    /// The copy's own pace: bytes copied, and time spent copying them (not waiting).
    private var copied: UInt64 = 0
    private var busy: UInt64 = 0
    private var copyGoesOn: (at: UInt64, written: UInt64)?

    init(patience: UInt64, share: Double) {
        self.patience = patience
        self.share = share
    }

    var hasStarted: Bool { started != nil }

    /// The reader asked for the bytes at `offset` at `now`.
    mutating func reader(at offset: UInt64, now: UInt64) {
        if started == nil { started = now }
        guard offset > reached || moved == nil else { return }
        reached = max(reached, offset)
        moved = now
    }

    /// The copy has `written` bytes at `now`, before it waits for the reader.
    mutating func copy(at written: UInt64, now: UInt64) {
        if let last = copyGoesOn, written >= last.written {
            copied += written - last.written
            busy += now &- last.at
        }
        copyGoesOn = nil
    }

    /// The copy goes on from `written` bytes at `now`, after any wait.
    mutating func copyGoesOn(from written: UInt64, now: UInt64) { copyGoesOn = (now, written) }

    /// Whether the copy, wanting the reader at `offset`, should wait for it at `now`. The reader's
    /// pace is judged from its start, less one patience for getting going.
    func waits(for offset: UInt64, now: UInt64) -> Bool {
        guard reached < offset, let moved, let started, now &- moved < patience else { return false }
        let judged = Double(now &- started) - Double(patience)
        guard judged > 0, busy > 0 else { return true }
        return Double(reached) / judged >= share * Double(copied) / Double(busy)
    }
}
