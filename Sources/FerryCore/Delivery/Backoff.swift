/// How long to wait before trying a delivery again after a transient failure: exponential, capped,
/// with jitter so that many shares do not all knock at the same moment; a server's own
/// `retry_after_ms` wins when it asks for longer.
public struct Backoff: Equatable, Sendable {
    public var initial: Int64
    public var maximum: Int64

    /// Microseconds.
    public init(initial: Int64 = 1_000_000, maximum: Int64 = 60_000_000) {
        self.initial = initial
        self.maximum = maximum
    }

    /// The delay in microseconds before attempt `attempt` (1 for the first retry). `jitter` is a
    /// number in 0..<1 (random in use, fixed in tests): the delay is between 75 % and 125 % of the step.
    public func delay(attempt: Int, retryAfter: Int64? = nil, jitter: Double) -> Int64 {
        let exponent = min(max(attempt - 1, 0), 30)
        let step = min(maximum, initial << Int64(exponent))
        let jittered = Int64(Double(step) * (0.75 + 0.5 * min(max(jitter, 0), 1)))
        return max(min(jittered, maximum), retryAfter ?? 0)
    }
}
