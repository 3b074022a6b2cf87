import NIOCore
import NIOConcurrencyHelpers

/// Counts a request body's writes that the connection has not finished yet, so the reader of the
/// next chunk waits only when too many are outstanding — and never for the event loop otherwise.
///
/// Awaiting an EventLoopFuture from a task (`get()`) always goes through the event loop, even
/// when the future is long complete: the loop was busy writing the chunk just handed over, so
/// each read of the file waited for the socket write before it (strace: pread, write, pread,
/// write, never side by side, and the socket never full). Here the loop reports each completion
/// as it happens, and the reader looks at a counter: reads and writes overlap, the socket fills,
/// and the homeserver sets the pace.
final class WritesInFlight: Sendable {
    private struct State {
        var outstanding = 0
        /// When the connection last finished a write: the upload's sign of life.
        var lastProgress = NIODeadline.now()
        var failure: (any Error)?
        var waiter: CheckedContinuation<Void, any Error>?
    }

    private let limit: Int
    private let state = NIOLockedValueBox(State())

    init(limit: Int) { self.limit = limit }

    /// Waits until fewer than `limit` writes are outstanding, then counts one more (one reader
    /// calls this, so nothing can take the place in between). Throws the first write's failure.
    func reserve() async throws {
        try await wait { $0.outstanding < limit }
        state.withLockedValue { $0.outstanding += 1 }
    }

    /// Hands `write` (a write just issued) to be counted until the connection finishes it.
    func track(_ write: EventLoopFuture<Void>) {
        write.whenComplete { result in
            let waiter = self.state.withLockedValue { state -> CheckedContinuation<Void, any Error>? in
                state.outstanding -= 1
                state.lastProgress = .now()
                if case .failure(let error) = result, state.failure == nil { state.failure = error }
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume()
        }
    }

    /// How long since the connection last finished a write (or since the upload began).
    var sinceProgress: TimeAmount { .now() - state.withLockedValue { $0.lastProgress } }

    /// Waits until every write is finished; throws the first failure.
    func drain() async throws {
        try await wait { $0.outstanding == 0 }
    }

    /// Returns at once when `ready` holds (no suspension, no hop); else parks until the next
    /// completion and looks again.
    private func wait(until ready: (State) -> Bool) async throws {
        while true {
            let now: Result<Bool, any Error> = state.withLockedValue { state in
                if let failure = state.failure { return .failure(failure) }
                return .success(ready(state))
            }
            if try now.get() { return }
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let parked = state.withLockedValue { state in
                    guard state.failure == nil, !ready(state) else { return false }
                    state.waiter = continuation
                    return true
                }
                if !parked { continuation.resume() }
            }
        }
    }
}
