import FerryCore
import XCTest

/// Dates for people: the locale's own format, ISO 8601 where only the C locale is set.
final class ReadableTimeTests: XCTestCase {
    func testTheCLocaleInAnyOfItsSpellingsGetsISO8601ToTheMinute() {
        for name in ["C", "POSIX", "C.UTF-8", "C.utf8", "C.UTF-8@euro", ""] {
            XCTAssertEqual(ReadableTime.pattern(timeLocale: name), "%Y-%m-%d %H:%M", name)
        }
    }

    func testARealLocaleWritesItsOwnDateAndTime() {
        for name in ["de_DE.UTF-8", "en_US.utf8", "fr_FR", "he_IL.UTF-8", "ca_ES.UTF-8@valencia", "Cy_GB"] {
            XCTAssertEqual(ReadableTime.pattern(timeLocale: name), "%x %X", name)
        }
    }
}
