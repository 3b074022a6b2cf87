import FerryCore
import XCTest

/// Untrusted text shown to people: escaped where it could lie, unchanged where it cannot.
final class SafeDisplayTests: XCTestCase {
    func testNewlinesTabsAndCarriageReturnsAreWrittenAsEscapes() {
        XCTAssertEqual(SafeDisplay.escaped("a\nb"), "a\\nb")
        XCTAssertEqual(SafeDisplay.escaped("a\tb"), "a\\tb")
        XCTAssertEqual(SafeDisplay.escaped("a\rb"), "a\\rb")
    }

    func testBidiOverridesAreWrittenAsUnicodeEscapes() {
        XCTAssertEqual(SafeDisplay.escaped("\u{202E}gnp.exe"), "\\u{202E}gnp.exe")
        XCTAssertEqual(SafeDisplay.escaped("a\u{2066}b\u{200F}"), "a\\u{2066}b\\u{200F}")
    }

    func testTerminalEscapesAndOtherControlCharactersAreEscaped() {
        XCTAssertEqual(SafeDisplay.escaped("\u{1B}[31mred"), "\\u{1B}[31mred")
        XCTAssertEqual(SafeDisplay.escaped("\u{7F}\u{85}\u{0}"), "\\u{7F}\\u{85}\\u{0}")
    }

    func testABackslashIsDoubledSoEscapesCannotBeForged() {
        XCTAssertEqual(SafeDisplay.escaped("a\\nb"), "a\\\\nb")
    }

    func testPlainUnicodeIsUnchanged() {
        XCTAssertEqual(SafeDisplay.escaped("café ✓"), "café ✓")
        XCTAssertEqual(SafeDisplay.escaped("日本語 🚢 שלום"), "日本語 🚢 שלום")
    }

    func testQuotedWrapsTheEscapedTextInQuotationMarks() {
        XCTAssertEqual(SafeDisplay.quoted("a\nb"), "\u{201C}a\\nb\u{201D}")
    }
}

/// Byte counts for people, in SI units as GNOME shows them.
final class ByteCountTests: XCTestCase {
    func testSmallCountsAreInBytes() {
        XCTAssertEqual(ByteCount.format(0), "0 bytes")
        XCTAssertEqual(ByteCount.format(1), "1 byte")
        XCTAssertEqual(ByteCount.format(999), "999 bytes")
    }

    func testLargerCountsUseSIUnitsWithOneDecimalWhenNeeded() {
        XCTAssertEqual(ByteCount.format(1000), "1 kB")
        XCTAssertEqual(ByteCount.format(1500), "1.5 kB")
        XCTAssertEqual(ByteCount.format(1_000_000), "1 MB")
        XCTAssertEqual(ByteCount.format(2_340_000_000), "2.3 GB")
        XCTAssertEqual(ByteCount.format(4 << 30), "4.3 GB")
        XCTAssertEqual(ByteCount.format(7_000_000_000_000), "7 TB")
    }

    func testCountsThatRoundUpToTheNextUnitAreShownInTheNextUnit() {
        // 999,999 bytes is "1 MB", never "1000 kB".
        XCTAssertEqual(ByteCount.format(999_999), "1 MB")
        XCTAssertEqual(ByteCount.format(999_950_000), "1 GB")
    }
}
