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
