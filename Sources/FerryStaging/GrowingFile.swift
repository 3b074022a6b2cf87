import FerryCore
import NIOConcurrencyHelpers
#if canImport(Glibc)
import Glibc
#endif

/// A staged copy that is still being written, as seen by someone reading it at the same time:
/// how many of its bytes are there, and whether the copy ended and at what size.
///
/// It lets an upload start while the file is still being copied into the spool (UploadAhead): the
/// reader never reads past what the copy has written, and learns of a failed copy at once.
///
/// The last few megabytes the copy wrote are kept in memory too (`windowSize`, RecentBytes): a
/// reader close behind takes them from there. Reading them back from the disk while the copy is
/// still writing made both wait for the disk, and the upload could go no faster than the copy.
/// The disk is faster than a loopback upload, so a window alone is soon left behind
/// (docs/PERFORMANCE.md, "Copying and uploading large files"): the copy waits for a reader that
/// keeps moving at no less than half its own pace rather than push bytes it has not taken out of
/// the window (ReaderPace). A reader that stalls, is slow, has not started or is far behind is not
/// waited for; the window is kept only while a reader is there to take from it.
public final class GrowingFile: GrowingSource {
    public enum Failure: Error, Equatable {
        /// The copy failed or was abandoned; what was read is worthless.
        case abandoned
        /// The copy ended at another size than expected: the original changed while it was copied.
        case sizeChanged(expected: UInt64, actual: UInt64)
    }

    private struct State {
        var written: UInt64 = 0
        var end: UInt64?
        var failed = false
        var waiter: (offset: UInt64, continuation: CheckedContinuation<UInt64, any Error>)?
        var recent = RecentBytes(capacity: GrowingFile.windowSize)
        var pace: ReaderPace
        var windowGivenUp = false

        /// Whether the copy keeps its bytes for the reader: once a reader has started, while it
        /// is within `reach` of the window. An upload starts reading only after asking the server
        /// a few things, some way into a fast copy, and catches up reading the file; now and then
        /// the server holds it up for a while. One further behind is reading the file and is not
        /// waited for: the window goes, for good.
        mutating func keepsWindow() -> Bool {
            guard !failed, !windowGivenUp, pace.hasStarted else { return false }
            if pace.reached &+ GrowingFile.reach < recent.start {
                recent.release()
                windowGivenUp = true
                return false
            }
            return true
        }
    }

    /// How much of the file's end is kept in memory: four of the copy's 1 MiB chunks.
    public static let windowSize = 4 << 20
    /// How far behind the window a reader is still waited for (see `keepsWindow`).
    static let reach: UInt64 = 32 << 20

    private let state: NIOLockedValueBox<State>
    public let expectedSize: UInt64

    /// `patienceMilliseconds` and `readerShare` (of the copy's own pace): see ReaderPace.
    public init(expectedSize: UInt64, patienceMilliseconds: UInt64 = 20, readerShare: Double = 0.5) {
        self.expectedSize = expectedSize
        state = NIOLockedValueBox(
            State(pace: ReaderPace(patience: patienceMilliseconds * 1_000_000, share: readerShare)))
    }

    /// The writer: `written` bytes from the start are in the file now, the last of them `bytes`
    /// (which a reader may take from memory; empty when the copy never had them in hand). Keeping
    /// them would push bytes the reader has yet to take out of the window: then, while the reader
    /// is moving, waits for it to come closer.
    public func advance(to written: UInt64, bytes: UnsafeRawBufferPointer = .init(start: nil, count: 0)) {
        if bytes.count > 0 {
            let now = Self.now()
            state.withLockedValue { $0.pace.copy(at: written, now: now) }
            waitForReader(toReach: written > UInt64(Self.windowSize) ? written - UInt64(Self.windowSize) : 0)
        }
        let now = Self.now()
        let ready = state.withLockedValue { state -> (CheckedContinuation<UInt64, any Error>, UInt64)? in
            state.pace.copyGoesOn(from: written, now: now)
            if state.keepsWindow() { state.recent.keep(bytes, endingAt: written) }
            state.written = max(state.written, written)
            guard let waiter = state.waiter, waiter.offset < expectedSize, state.written > waiter.offset else {
                return nil
            }
            state.waiter = nil
            return (waiter.continuation, state.written)
        }
        if let (continuation, written) = ready { continuation.resume(returning: written) }
    }

    /// The writer: the copy is complete at `size` bytes (and flushed to disk or not — readers only
    /// need the bytes to be in the file).
    public func finish(size: UInt64) {
        let waiter = state.withLockedValue { state in
            state.written = size
            state.end = size
            // No reader yet: should one come, it reads the file.
            if !state.pace.hasStarted {
                state.recent.release()
                state.windowGivenUp = true
            }
            defer { state.waiter = nil }
            return state.waiter?.continuation
        }
        guard let waiter else { return }
        if size == expectedSize {
            waiter.resume(returning: size)
        } else {
            waiter.resume(throwing: Failure.sizeChanged(expected: expectedSize, actual: size))
        }
    }

    /// The writer gave up (the copy failed, the share was refused or cancelled).
    public func fail() {
        let waiter = state.withLockedValue { state in
            state.failed = true
            state.recent.release()
            defer { state.waiter = nil }
            return state.waiter?.continuation
        }
        waiter?.resume(throwing: Failure.abandoned)
    }

    /// The reader: waits until more than `offset` bytes are in the file and returns how many are,
    /// never more than the expected size; at or past the expected size, waits for the copy to end.
    /// Throws when the copy failed, or ended at another size than expected.
    public func available(after offset: UInt64) async throws -> UInt64 {
        try await withCheckedThrowingContinuation { continuation in
            let now = Self.now()
            let answer: Result<UInt64, any Error>? = state.withLockedValue { state in
                state.pace.reader(at: offset, now: now)
                // Asked at the end, the reader has read everything: the window is no use any more.
                if offset >= expectedSize { state.recent.release() }
                if state.failed { return .failure(Failure.abandoned) }
                if let end = state.end {
                    return end == expectedSize
                        ? .success(end) : .failure(Failure.sizeChanged(expected: expectedSize, actual: end))
                }
                if offset < expectedSize, state.written > offset { return .success(min(state.written, expectedSize)) }
                state.waiter = (offset, continuation)
                return nil
            }
            if let answer { continuation.resume(with: answer) }
        }
    }

    /// The reader: copies bytes at `offset` from the window, if it still holds them.
    public func copyRecent(at offset: UInt64, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        let now = Self.now()
        return state.withLockedValue { state in
            let count = state.recent.copy(at: offset, into: buffer)
            state.pace.reader(at: offset + UInt64(count), now: now)
            return count
        }
    }

    /// The reader: it reads no more (its upload ended, failed or was abandoned). The window goes,
    /// and the copy does not wait for it again.
    public func readerStopped() {
        state.withLockedValue { state in
            state.recent.release()
            state.windowGivenUp = true
        }
    }

    /// Waits until the reader has asked for `offset`, for as long as ReaderPace says it is worth it.
    private func waitForReader(toReach offset: UInt64) {
        while true {
            let now = Self.now()
            guard state.withLockedValue({ $0.keepsWindow() && $0.pace.waits(for: offset, now: now) }) else { return }
            // A tenth of a millisecond: a fifth of a reader's chunk at loopback speed.
            usleep(100)
        }
    }

    private static func now() -> UInt64 { SystemClock.monotonicNanoseconds() }

    /// The reader: waits for the copy to end, and throws unless it ended whole at the expected size.
    /// What was read is only the staged file once this returns: the original may have grown.
    public func completed() async throws { _ = try await available(after: expectedSize) }
}
