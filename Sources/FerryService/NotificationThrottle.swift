#if canImport(Glibc)
import Glibc
#endif

/// Lets one notification of a kind through per interval; used on the main thread only.
final class NotificationThrottle {
    private let interval: Int64
    private var last: Int64 = .min

    init(seconds: Int64) { interval = seconds * 1_000_000 }

    func allow() -> Bool {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let micros = Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec) / 1000
        guard last == .min || micros - last >= interval else { return false }
        last = micros
        return true
    }
}
