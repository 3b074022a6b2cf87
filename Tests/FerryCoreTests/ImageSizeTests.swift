@testable import FerryCore
import XCTest

/// m.image's info.w and info.h, read from the first bytes of the file.
final class ImageSizeTests: XCTestCase {
    func testPNGSizeComesFromIHDR() {
        var bytes: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]
        bytes += [0, 0, 0x01, 0x40, 0, 0, 0, 0xF0] // 320 × 240
        XCTAssertEqual(ImageSize.of(bytes)?.width, 320)
        XCTAssertEqual(ImageSize.of(bytes)?.height, 240)
    }

    func testGIFSizeIsLittleEndian() {
        let bytes: [UInt8] = Array("GIF89a".utf8) + [0x10, 0x00, 0x20, 0x00]
        XCTAssertEqual(ImageSize.of(bytes)?.width, 16)
        XCTAssertEqual(ImageSize.of(bytes)?.height, 32)
    }

    func testJPEGSizeComesFromTheFrameHeaderAfterOtherSegments() {
        // SOI, an APP0 segment of 16 bytes, then SOF0 with height 600 and width 800.
        var bytes: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10] + [UInt8](repeating: 0, count: 14)
        bytes += [0xFF, 0xC0, 0x00, 0x11, 0x08, 0x02, 0x58, 0x03, 0x20, 0x03]
        XCTAssertEqual(ImageSize.of(bytes)?.width, 800)
        XCTAssertEqual(ImageSize.of(bytes)?.height, 600)
    }

    func testADefineHuffmanTableSegmentIsNotAFrameHeader() {
        var bytes: [UInt8] = [0xFF, 0xD8, 0xFF, 0xC4, 0x00, 0x04, 0x00, 0x00]
        bytes += [0xFF, 0xC2, 0x00, 0x11, 0x08, 0x00, 0x0A, 0x00, 0x14, 0x03]
        XCTAssertEqual(ImageSize.of(bytes)?.width, 20)
        XCTAssertEqual(ImageSize.of(bytes)?.height, 10)
    }

    func testAnythingElseHasNoSize() {
        XCTAssertNil(ImageSize.of(Array("%PDF-1.7\n".utf8)))
        XCTAssertNil(ImageSize.of([]))
        XCTAssertNil(ImageSize.of([0x89, 0x50, 0x4E, 0x47]))
    }
}
