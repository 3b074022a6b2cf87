#if canImport(Glibc)
import Glibc
#endif

/// Wall-clock time in the units the outbox stores.
enum Clock {
    @Sendable static func microseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec) / 1000
    }
}
