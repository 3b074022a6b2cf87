#if canImport(Glibc)
import Glibc
#endif

/// The system's clocks, read one way everywhere: the wall clock for what is stored, the
/// monotonic one (CLOCK_MONOTONIC, the clock Python's time.monotonic() reads) for intervals.
public enum SystemClock {
    /// Wall-clock time in the units the outbox stores (µs since the Unix epoch).
    @inlinable @Sendable public static func microseconds() -> Int64 { Int64(read(CLOCK_REALTIME) / 1000) }

    /// Time that only moves forward (µs), for intervals: throttles and bursts.
    @inlinable @Sendable public static func monotonicMicroseconds() -> Int64 { Int64(read(CLOCK_MONOTONIC) / 1000) }

    /// Time that only moves forward (ns), for the pace of a copy.
    @inlinable public static func monotonicNanoseconds() -> UInt64 { read(CLOCK_MONOTONIC) }

    /// Time that only moves forward (s), for figures a benchmark compares with its own clock.
    @inlinable public static func monotonicSeconds() -> Double { Double(read(CLOCK_MONOTONIC)) / 1e9 }

    @inlinable static func read(_ clock: clockid_t) -> UInt64 {
        var now = timespec()
        clock_gettime(clock, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }
}
