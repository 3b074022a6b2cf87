@testable import FerryCore
import Foundation
import XCTest

/// Which pictures get a thumbnail, and its size: within 800 × 600, proportions kept.
final class ThumbnailRuleTests: XCTestCase {
    func testAPictureLargerThan800By600OrAMegabyteNeedsAThumbnail() {
        XCTAssertFalse(ThumbnailRule.needsThumbnail(width: 800, height: 600, bytes: 1_000_000))
        XCTAssertTrue(ThumbnailRule.needsThumbnail(width: 801, height: 600, bytes: 10))
        XCTAssertTrue(ThumbnailRule.needsThumbnail(width: 600, height: 601, bytes: 10))
        // Small in pixels, large in bytes (an uncompressed PNG): a phone should not fetch it to preview it.
        XCTAssertTrue(ThumbnailRule.needsThumbnail(width: 640, height: 480, bytes: 1_000_001))
    }

    func testTheThumbnailFitsTheBoxWithTheProportionsKept() {
        XCTAssertTrue(ThumbnailRule.thumbnailSize(width: 6000, height: 4000) == (800, 533))
        // Portrait: the height is what limits it.
        XCTAssertTrue(ThumbnailRule.thumbnailSize(width: 4000, height: 6000) == (400, 600))
        XCTAssertTrue(ThumbnailRule.thumbnailSize(width: 3840, height: 2160) == (800, 450))
    }

    func testALargePictureIsDecodedAtTheScaleJPEGDecodesAtWhereThatIsLargeEnough() {
        // 6000 / 8 = 750: the eighth JPEG decodes to is the thumbnail itself.
        XCTAssertEqual(ThumbnailRule.decodingBox(width: 6000, height: 4000), 750)
        XCTAssertEqual(ThumbnailRule.decodingBox(width: 4000, height: 6000), 750)
        // 4000 / 8 = 500 is too small, 4000 / 4 = 1000 too large: the full box, scaled once.
        XCTAssertEqual(ThumbnailRule.decodingBox(width: 4000, height: 3000), 800)
        // 3000 / 4 = 750.
        XCTAssertEqual(ThumbnailRule.decodingBox(width: 3000, height: 2000), 750)
        XCTAssertEqual(ThumbnailRule.decodingBox(width: 1300, height: 900), 650)
        XCTAssertEqual(ThumbnailRule.decodingBox(width: 9000, height: 6000), 800)
    }

    func testASmallPictureIsNeverEnlargedAndAThinOneKeepsAPixel() {
        XCTAssertTrue(ThumbnailRule.thumbnailSize(width: 640, height: 480) == (640, 480))
        XCTAssertTrue(ThumbnailRule.thumbnailSize(width: 100_000, height: 10) == (800, 1))
        XCTAssertTrue(ThumbnailRule.thumbnailSize(width: 0, height: 0) == (1, 1))
    }
}

/// The helper writes its facts without Foundation; the sender reads them with JSONDecoder.
final class PictureFactsTests: XCTestCase {
    func testTheHelpersJSONReadsBackAsTheSameFacts() throws {
        let facts = [
            PictureFacts(
                width: 4000, height: 6000,
                thumbnail: .init(width: 400, height: 600, mimetype: "image/jpeg", size: 41_000),
                blurhash: "L5H2EC=PM+yV"),
            PictureFacts(width: 300, height: 200),
        ]
        for original in facts {
            let json = Data(CanonicalJSON.encode(original.json))
            XCTAssertEqual(try JSONDecoder().decode(PictureFacts.self, from: json), original)
        }
    }
}

/// What the helper says is checked before it reaches an event: it decodes files from anywhere.
final class PictureFactsSoundnessTests: XCTestCase {
    let thumbnail = PictureFacts.Thumbnail(width: 800, height: 600, mimetype: "image/jpeg", size: 1000)

    func testFactsAPictureCanHaveAreSound() {
        XCTAssertTrue(PictureFacts(width: 4000, height: 3000, thumbnail: thumbnail, blurhash: "LEHV6nWB2yk8").isSound)
        XCTAssertTrue(PictureFacts(width: 1, height: 1).isSound)
    }

    func testSizesTypesAndHashesNoPictureHasAreNot() {
        XCTAssertFalse(PictureFacts(width: 0, height: 3000).isSound)
        var wrongType = thumbnail
        wrongType.mimetype = "text/html"
        XCTAssertFalse(PictureFacts(width: 10, height: 10, thumbnail: wrongType).isSound)
        var tooLarge = thumbnail
        tooLarge.height = 601
        XCTAssertFalse(PictureFacts(width: 10, height: 10, thumbnail: tooLarge).isSound)
        var empty = thumbnail
        empty.size = 0
        XCTAssertFalse(PictureFacts(width: 10, height: 10, thumbnail: empty).isSound)
        XCTAssertFalse(PictureFacts(width: 10, height: 10, blurhash: "LEHV6nWB2yk8\"}").isSound)
        XCTAssertFalse(PictureFacts(width: 10, height: 10, blurhash: "").isSound)
    }
}
