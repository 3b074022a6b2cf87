/// How long to wait before trying a delivery again after a transient failure: exponential, capped,
/// with jitter so that many shares do not all knock at the same moment; a server's own
/// `retry_after_ms` wins when it asks for longer.
public struct Backoff: Equatable, Sendable {
    /// The first retry's delay, in microseconds; each later one doubles it.
    public var initial: Int64
    /// The longest step the doubling reaches, in microseconds (before jitter).
    public var maximum: Int64

    /// Microseconds.
    public init(initial: Int64 = 1_000_000, maximum: Int64 = 60_000_000) {
        self.initial = initial
        self.maximum = maximum
    }

    /// The longest delay ever returned, whatever a server asks for: an hour, in microseconds.
    public static let longest = ServerNumbers.microseconds(milliseconds: ServerNumbers.maximumRetryDelayMilliseconds)

    /// The delay in microseconds before attempt `attempt` (1 for the first retry). `jitter` is a
    /// number in 0..<1 (random in use, fixed in tests): the delay is between 75 % and 125 % of the step.
    /// `retryAfterMilliseconds` is the server's own wish, which wins when longer, up to an hour;
    /// the result is never negative.
    public func delay(attempt: Int, retryAfterMilliseconds: Int64? = nil, jitter: Double) -> Int64 {
        let exponent = min(max(attempt, 1) - 1, 30)
        let (scaled, overflow) = initial.multipliedReportingOverflow(by: 1 << Int64(exponent))
        let step = max(0, min(maximum, overflow ? maximum : scaled))
        let factor = 0.75 + 0.5 * (jitter.isNaN ? 0 : min(max(jitter, 0), 1))
        // Clamped as a Double: 125 % of a step near Int64.max would not convert back.
        let jittered = Int64(min(Double(step) * factor, Double(min(maximum, Self.longest))))
        let asked = retryAfterMilliseconds.map(ServerNumbers.microseconds(milliseconds:)) ?? 0
        return min(max(jittered, asked, 0), Self.longest)
    }
}
