/// Makes the encryption's entry points run one after another, in order of arrival. An actor alone
/// is not enough: it lets another call in at every `await` (a key upload, a query), and two calls
/// stepping the same ratchet, or a sign-out deleting the state under an event being made, must
/// never interleave.
struct OneAtATime {
    private var busy = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    /// True when the caller may go on at once; otherwise it must wait (`enqueue`).
    mutating func enter() -> Bool {
        if busy { return false }
        busy = true
        return true
    }

    mutating func enqueue(_ continuation: CheckedContinuation<Void, Never>) { waiting.append(continuation) }

    /// Hands the turn to the next caller, or frees it.
    mutating func leave() {
        if waiting.isEmpty { busy = false } else { waiting.removeFirst().resume() }
    }
}

extension Encryption {
    /// Runs `body` when no other entry point is running.
    func exclusively<T: Sendable, Failure: Error>(_ body: () async throws(Failure) -> T) async throws(Failure) -> T {
        if !turns.enter() { await withCheckedContinuation { turns.enqueue($0) } }
        defer { turns.leave() }
        return try await body()
    }
}
