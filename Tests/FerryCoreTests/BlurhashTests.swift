@testable import FerryCore
import XCTest

/// The blurhash of a picture, against the hashes the Python implementation on PyPI (`blurhash`
/// 1.1.5, pure Python, not ours) gives for the same pixels:
///
///     def picture(w, h):
///         return [[[(x*37+y*11)%256, (x*5+y*53)%256, (x*y*13+90)%256] for x in range(w)] for y in range(h)]
///     blurhash.encode(picture(7, 5), 4, 3)
final class BlurhashTests: XCTestCase {
    /// The test picture as RGB bytes, `padding` unused bytes after each row.
    func picture(width: Int, height: Int, channels: Int = 3, padding: Int = 0) -> [UInt8] {
        var bytes: [UInt8] = []
        for y in 0..<height {
            for x in 0..<width {
                bytes += [
                    UInt8((x * 37 + y * 11) % 256), UInt8((x * 5 + y * 53) % 256), UInt8((x * y * 13 + 90) % 256),
                ]
                if channels == 4 { bytes.append(UInt8((x + y) % 256)) }
            }
            bytes += [UInt8](repeating: 0xAB, count: padding)
        }
        return bytes
    }

    func hash(
        _ bytes: [UInt8], width: Int, height: Int, channels: Int = 3, padding: Int = 0, x: Int = 4, y: Int = 3
    ) -> String? {
        bytes.withUnsafeBytes {
            Blurhash.encode(
                pixels: $0, width: width, height: height, stride: width * channels + padding, channels: channels,
                xComponents: x, yComponents: y)
        }
    }

    func testFourByThreeComponentsAsThePythonImplementationGivesThem() {
        XCTAssertEqual(hash(picture(width: 7, height: 5), width: 7, height: 5), "LhHLbx2:J3-j*WI.sqeuMvsEbKad")
        XCTAssertEqual(hash(picture(width: 32, height: 24), width: 32, height: 24), "L3HV9v_0n2^[=$HmEpF:1pn217vN")
    }

    func testOneComponentIsTheAverageColourAlone() {
        XCTAssertEqual(hash(picture(width: 3, height: 3), width: 3, height: 3, x: 1, y: 1), "006uh#")
    }

    func testNineByNineComponents() {
        XCTAssertEqual(
            hash(picture(width: 20, height: 30), width: 20, height: 30, x: 9, y: 9),
            "|MHV3htQbCo}bCO:WT-UWms;aQk8W;i$jGFYWVWFaKI^WUIvaw2@N^,tWUbXniScj=OmSJ]QxCrsepn$f8jEa$wIs9NKjck"
                + "DetWTf%ShWXj]k8S$VtawjYoLa}sDnlfAa%spV_W-bZbIW-e.kEWrVsn-aeoKjcjXjJj;bu")
    }

    func testABlackPictureHasNoDetail() {
        let black = [UInt8](repeating: 0, count: 4 * 4 * 3)
        XCTAssertEqual(hash(black, width: 4, height: 4), "L00000fQfQfQfQfQfQfQfQfQfQfQ")
    }

    /// GdkPixbuf's rows are padded, and pictures with transparency have a fourth byte per pixel:
    /// neither changes the hash.
    func testRowPaddingAndAnAlphaChannelAreSkipped() {
        let rgba = picture(width: 7, height: 5, channels: 4, padding: 3)
        XCTAssertEqual(hash(rgba, width: 7, height: 5, channels: 4, padding: 3), "LhHLbx2:J3-j*WI.sqeuMvsEbKad")
    }

    func testNothingToHashGivesNoHash() {
        XCTAssertNil(hash([], width: 0, height: 0))
        XCTAssertNil(hash(picture(width: 2, height: 2), width: 2, height: 2, x: 10, y: 3))
        // Fewer bytes than the size says.
        XCTAssertNil(hash(picture(width: 2, height: 2), width: 3, height: 3))
    }
}
