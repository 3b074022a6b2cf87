#if canImport(Glibc)
import Glibc
#endif

/// The system's clocks, read one way everywhere: the wall clock for what is stored, the
/// monotonic one (CLOCK_MONOTONIC, the clock Python's time.monotonic() reads) for intervals.
public enum SystemClock {
    /// Wall-clock time in the units the outbox stores (µs since the Unix epoch).
    @inlinable @Sendable public static func microseconds() -> Int64 {
        let (seconds, nanoseconds) = read(CLOCK_REALTIME)
        return seconds * 1_000_000 + nanoseconds / 1000
    }

    /// Time that only moves forward (µs), for intervals: throttles and bursts.
    @inlinable @Sendable public static func monotonicMicroseconds() -> Int64 {
        let (seconds, nanoseconds) = read(CLOCK_MONOTONIC)
        return seconds * 1_000_000 + nanoseconds / 1000
    }

    /// Time that only moves forward (ns), for the pace of a copy.
    @inlinable public static func monotonicNanoseconds() -> UInt64 {
        let (seconds, nanoseconds) = read(CLOCK_MONOTONIC)
        return UInt64(seconds) * 1_000_000_000 + UInt64(nanoseconds)
    }

    /// Time that only moves forward (s), for figures a benchmark compares with its own clock.
    @inlinable public static func monotonicSeconds() -> Double {
        let (seconds, nanoseconds) = read(CLOCK_MONOTONIC)
        return Double(seconds) + Double(nanoseconds) / 1e9
    }

    @inlinable static func read(_ clock: clockid_t) -> (seconds: Int64, nanoseconds: Int64) {
        var now = timespec()
        clock_gettime(clock, &now)
        return (Int64(now.tv_sec), Int64(now.tv_nsec))
    }
}
