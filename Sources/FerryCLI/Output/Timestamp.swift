#if canImport(Glibc)
import Glibc
#endif

import GLibAdapter

/// Times for JSON, in UTC, and for people, in their own time and locale.
enum Timestamp {
    /// `2026-11-21T14:00:00.123Z`
    static func iso8601(microseconds: Int64) -> String {
        format(microseconds, "%Y-%m-%dT%H:%M:%S") + "." + pad(Int((microseconds % 1_000_000) / 1000), 3) + "Z"
    }

    /// Local time, as the person's locale writes a date and a time.
    static func readable(microseconds: Int64) -> String {
        Gettext.localDateTime(microseconds: microseconds)
    }

    private static func format(_ microseconds: Int64, _ pattern: String) -> String {
        var seconds = time_t(microseconds / 1_000_000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        var buffer = [CChar](repeating: 0, count: 64)
        let count = strftime(&buffer, buffer.count, pattern, &parts)
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func pad(_ value: Int, _ width: Int) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, width - text.count)) + text
    }
}
