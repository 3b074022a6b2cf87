import FerryCore
import NIOConcurrencyHelpers

/// A staged copy that is still being written, as seen by someone reading it at the same time:
/// how many of its bytes are there, and whether the copy ended and at what size.
///
/// It lets an upload start while the file is still being copied into the spool (UploadAhead): the
/// reader never reads past what the copy has written, and learns of a failed copy at once.
///
/// The last few megabytes the copy wrote are kept in memory too (`window`): a reader close
/// behind takes them from there. Reading them back from the disk while the copy is still writing
/// made both wait for the disk: a 256 MiB copy took 0.35–0.45 s instead of 0.2 s, and the upload
/// could go no faster than the copy.
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
        /// The latest bytes written, a ring indexed by file offset modulo its size, holding the
        /// file's bytes from `windowStart` to `windowEnd`; allocated at the first bytes given.
        var window: [UInt8] = []
        var windowStart: UInt64 = 0
        var windowEnd: UInt64 = 0
    }

    /// How much of the file's end is kept in memory: four of the copy's 1 MiB chunks. The reader
    /// falls behind the copy by more than that only when the network is slower than the disk, and
    /// then reading back costs the copy nothing it would notice.
    public static let windowSize = 4 << 20

    private let state = NIOLockedValueBox(State())
    public let expectedSize: UInt64

    public init(expectedSize: UInt64) { self.expectedSize = expectedSize }

    /// The writer: `written` bytes from the start are in the file now, the last of them `bytes`
    /// (which a reader may take from memory; empty when the copy never had them in hand).
    public func advance(to written: UInt64, bytes: UnsafeRawBufferPointer = .init(start: nil, count: 0)) {
        let ready = state.withLockedValue { state -> (CheckedContinuation<UInt64, any Error>, UInt64)? in
            Self.keep(bytes, endingAt: written, in: &state)
            state.written = max(state.written, written)
            guard let waiter = state.waiter, waiter.offset < expectedSize, state.written > waiter.offset else { return nil }
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
            defer { state.waiter = nil }
            return state.waiter?.continuation
        }
        guard let waiter else { return }
        if size == expectedSize { waiter.resume(returning: size) } else {
            waiter.resume(throwing: Failure.sizeChanged(expected: expectedSize, actual: size))
        }
    }

    /// The writer gave up (the copy failed, the share was refused or cancelled).
    public func fail() {
        let waiter = state.withLockedValue { state in
            state.failed = true
            state.window = []
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
            let answer: Result<UInt64, any Error>? = state.withLockedValue { state in
                // Asked at the end, the reader has read everything: the window is no use any more.
                if offset >= expectedSize { state.window = [] }
                if state.failed { return .failure(Failure.abandoned) }
                if let end = state.end {
                    return end == expectedSize ? .success(end) : .failure(Failure.sizeChanged(expected: expectedSize, actual: end))
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
        state.withLockedValue { state in
            guard !state.window.isEmpty, offset >= state.windowStart, offset < state.windowEnd else { return 0 }
            let count = Int(min(UInt64(buffer.count), state.windowEnd - offset))
            state.window.withUnsafeBytes { ring in
                Self.ringCopy(count: count, at: Int(offset % UInt64(ring.count)), ring: ring.count) { from, to, length in
                    buffer.baseAddress!.advanced(by: to).copyMemory(from: ring.baseAddress!.advanced(by: from), byteCount: length)
                }
            }
            return count
        }
    }

    /// Puts the bytes just written, the file's up to `end`, at the window's end. Bytes that do not
    /// follow on from the window (the copy gave none for a while) start it afresh.
    private static func keep(_ bytes: UnsafeRawBufferPointer, endingAt end: UInt64, in state: inout State) {
        guard let source = bytes.baseAddress, bytes.count > 0, UInt64(bytes.count) <= end, !state.failed else { return }
        if state.window.isEmpty { state.window = [UInt8](repeating: 0, count: windowSize) }
        let kept = min(bytes.count, windowSize)
        let start = end - UInt64(kept)
        if state.windowEnd != end - UInt64(bytes.count) || state.windowEnd > end { state.windowStart = start }
        state.windowEnd = end
        state.windowStart = max(state.windowStart, end >= UInt64(windowSize) ? end - UInt64(windowSize) : 0)
        state.window.withUnsafeMutableBytes { ring in
            ringCopy(count: kept, at: Int(start % UInt64(ring.count)), ring: ring.count) { to, from, length in
                ring.baseAddress!.advanced(by: to).copyMemory(from: source.advanced(by: bytes.count - kept + from), byteCount: length)
            }
        }
    }

    /// Splits a copy of `count` bytes at ring position `at` into at most two pieces that do not
    /// wrap: `piece(ring position, offset within the copy, length)`.
    private static func ringCopy(count: Int, at position: Int, ring: Int, _ piece: (Int, Int, Int) -> Void) {
        let first = min(count, ring - position)
        piece(position, 0, first)
        if count > first { piece(0, first, count - first) }
    }

    /// The reader: waits for the copy to end, and throws unless it ended whole at the expected size.
    /// What was read is only the staged file once this returns: the original may have grown.
    public func completed() async throws { _ = try await available(after: expectedSize) }
}
