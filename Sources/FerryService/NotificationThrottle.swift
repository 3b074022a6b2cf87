import FerryCore
import GLibAdapter

/// Lets one notification of a kind through per interval.
@GLibMain final class NotificationThrottle {
    private let interval: Int64
    private var last: Int64 = .min

    init(seconds: Int64) { interval = seconds * 1_000_000 }

    func allow() -> Bool {
        let micros = SystemClock.monotonicMicroseconds()
        guard last == .min || micros - last >= interval else { return false }
        last = micros
        return true
    }
}
