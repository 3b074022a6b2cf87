#if canImport(Glibc)
import Glibc
#endif

enum Clock {
    /// Wall-clock time in the units the outbox stores (µs since the Unix epoch).
    @Sendable static func microseconds() -> Int64 { read(CLOCK_REALTIME) }

    /// Time that only moves forward (µs), for intervals: throttles and bursts.
    @Sendable static func monotonicMicroseconds() -> Int64 { read(CLOCK_MONOTONIC) }

    private static func read(_ clock: clockid_t) -> Int64 {
        var now = timespec()
        clock_gettime(clock, &now)
        return Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec) / 1000
    }
}
