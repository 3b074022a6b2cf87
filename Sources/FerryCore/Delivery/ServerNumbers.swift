/// Numbers that come from a homeserver, made safe to compute with.
///
/// A server (or something pretending to be one) may send any JSON number or header text: enormous,
/// negative, fractional, not a number at all. Swift traps on an overflowing `Int64` product, and a
/// retry time committed before such a trap crashes the service again at every start. So every
/// number from outside goes through here before any arithmetic: clamped into a range that means
/// something, or refused as nil, and the caller falls back to its own choice.
public enum ServerNumbers {
    /// The furthest ahead a retry is ever scheduled, whatever a server asks: an hour, in milliseconds.
    public static let maximumRetryDelayMilliseconds: Int64 = 3_600_000

    /// A retry delay (`retry_after_ms`) from a JSON number: rounded up to whole milliseconds and
    /// clamped to an hour; nil for a negative or non-finite value, which asks for nothing usable.
    public static func retryDelay(milliseconds value: Double) -> Int64? {
        guard value.isFinite, value >= 0 else { return nil }
        return value >= Double(maximumRetryDelayMilliseconds)
            ? maximumRetryDelayMilliseconds : Int64(value.rounded(.up))
    }

    /// A retry delay in milliseconds from the delay-seconds form of an HTTP `Retry-After` header
    /// (a fraction is tolerated), clamped to an hour; nil for anything but digits and one point
    /// ("1e9", "0x10", "-5" or "5 seconds" are not delays).
    public static func retryDelay(seconds text: String) -> Int64? {
        let text = text.trimmingSpaces
        guard !text.isEmpty, text.filter({ $0 == "." }).count <= 1,
            text.allSatisfy({ $0 == "." || ("0"..."9").contains($0) }), let seconds = Double(text)
        else { return nil }
        return retryDelay(milliseconds: seconds * 1000)
    }

    /// A size in bytes from a JSON number (`m.upload.size`, `info.size`): nil when negative,
    /// fractional or not finite; saturated at `UInt64.max` when enormous.
    public static func byteCount(_ value: Double) -> UInt64? {
        guard value.isFinite, value >= 0, value.rounded(.towardZero) == value else { return nil }
        return value >= 18_446_744_073_709_551_615.0 ? .max : UInt64(value)
    }

    /// Milliseconds to microseconds without a trap: saturates at the ends of `Int64`.
    public static func microseconds(milliseconds: Int64) -> Int64 {
        let (product, overflow) = milliseconds.multipliedReportingOverflow(by: 1000)
        return overflow ? (milliseconds < 0 ? .min : .max) : product
    }

    /// `a - b` without a trap: saturates at the ends of `Int64`.
    public static func difference(_ a: Int64, _ b: Int64) -> Int64 {
        let (result, overflow) = a.subtractingReportingOverflow(b)
        return overflow ? (b < 0 ? .max : .min) : result
    }

    /// `a + b` without a trap: saturates at the ends of `Int64`.
    public static func sum(_ a: Int64, _ b: Int64) -> Int64 {
        let (result, overflow) = a.addingReportingOverflow(b)
        return overflow ? (b < 0 ? .min : .max) : result
    }
}

extension String {
    fileprivate var trimmingSpaces: String {
        String(drop(while: { $0 == " " || $0 == "\t" }).reversed().drop(while: { $0 == " " || $0 == "\t" }).reversed())
    }
}
