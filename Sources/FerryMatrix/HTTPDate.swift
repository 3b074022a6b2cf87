import Foundation

/// RFC 9110's IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT"), the one HTTP-date form a server may
/// send in `Retry-After`. Read field by field, with the Gregorian calendar doing the arithmetic:
/// DateFormatter, given what fuzzing made of a hostile header, leaked on every call and managed
/// about a thousand headers a second.
enum HTTPDate {
    static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    static let weekdays = ["Mon,", "Tue,", "Wed,", "Thu,", "Fri,", "Sat,", "Sun,"]
    static let calendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: 0) ?? calendar.timeZone
        return calendar
    }()

    /// The date, or nil for anything that is not exactly an IMF-fixdate of a real day.
    static func parse(_ text: String) -> Date? {
        let fields = text.split(separator: " ", omittingEmptySubsequences: false)
        guard text.utf8.count == 29, fields.count == 6, weekdays.contains(String(fields[0])), fields[5] == "GMT",
            let day = number(fields[1], digits: 2), let month = months.firstIndex(of: String(fields[2])),
            let year = number(fields[3], digits: 4)
        else { return nil }
        let clock = fields[4].split(separator: ":", omittingEmptySubsequences: false)
        guard clock.count == 3, let hour = number(clock[0], digits: 2), let minute = number(clock[1], digits: 2),
            let second = number(clock[2], digits: 2), (1...31).contains(day), hour < 24, minute < 60, second <= 60
        else { return nil }
        let components = DateComponents(
            year: year, month: month + 1, day: day, hour: hour, minute: minute,
            second: min(second, 59)) // a leap second reads as the one before
        // The calendar rolls 31 Feb over into March: a day that does not exist is refused instead.
        guard let date = calendar.date(from: components),
            calendar.component(.day, from: date) == day
        else { return nil }
        return date
    }

    private static func number(_ text: Substring, digits: Int) -> Int? {
        guard text.utf8.count == digits, text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
        else { return nil }
        return Int(text)
    }
}
