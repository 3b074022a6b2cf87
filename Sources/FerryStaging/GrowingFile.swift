import NIOConcurrencyHelpers

/// A staged copy that is still being written, as seen by someone reading it at the same time:
/// how many of its bytes are there, and whether the copy ended and at what size.
///
/// It lets an upload start while the file is still being copied into the spool (UploadAhead): the
/// reader never reads past what the copy has written, and learns of a failed copy at once.
public final class GrowingFile: Sendable {
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
    }

    private let state = NIOLockedValueBox(State())
    public let expectedSize: UInt64

    public init(expectedSize: UInt64) { self.expectedSize = expectedSize }

    /// The writer: `written` bytes from the start are in the file now.
    public func advance(to written: UInt64) {
        let ready = state.withLockedValue { state -> (CheckedContinuation<UInt64, any Error>, UInt64)? in
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

    /// The reader: waits for the copy to end, and throws unless it ended whole at the expected size.
    /// What was read is only the staged file once this returns: the original may have grown.
    public func completed() async throws { _ = try await available(after: expectedSize) }
}
