@testable import FerryCore
import Foundation
import XCTest

/// A video's shown size: its pixels' shape and the rotation a phone recorded applied.
final class VideoShapeTests: XCTestCase {
    func testSquarePixelsUnturnedAreTheStoredSize() {
        XCTAssertTrue(
            VideoShape.shownSize(width: 1920, height: 1080, parN: 1, parD: 1, orientation: nil)! == (1920, 1080))
        XCTAssertTrue(
            VideoShape.shownSize(width: 1920, height: 1080, parN: 1, parD: 1, orientation: "rotate-0")! == (1920, 1080))
        // Half a turn is still landscape.
        XCTAssertTrue(
            VideoShape.shownSize(width: 1920, height: 1080, parN: 1, parD: 1, orientation: "rotate-180")! == (
                1920, 1080
            ))
    }

    func testAPhoneVideoHeldUprightIsTallerThanWide() {
        for orientation in ["rotate-90", "rotate-270", "flip-rotate-90", "flip-rotate-270"] {
            XCTAssertTrue(
                VideoShape.shownSize(width: 1920, height: 1080, parN: 1, parD: 1, orientation: orientation)!
                    == (1080, 1920), orientation)
        }
    }

    func testWidePixelsWidenThePicture() {
        // DVD PAL 16:9: 720 × 576 stored, pixels 64:45 as wide as tall.
        XCTAssertTrue(
            VideoShape.shownSize(width: 720, height: 576, parN: 64, parD: 45, orientation: nil)! == (1024, 576))
        // A zero aspect (unknown) is square.
        XCTAssertTrue(VideoShape.shownSize(width: 640, height: 480, parN: 0, parD: 1, orientation: nil)! == (640, 480))
    }

    func testNoSizeIsNoShape() {
        XCTAssertNil(VideoShape.shownSize(width: 0, height: 1080, parN: 1, parD: 1, orientation: nil))
    }
}

/// What ferry-media says is checked before it reaches an event, and reads back as written.
final class MediaFactsTests: XCTestCase {
    func testTheHelpersJSONReadsBackAsTheFacts() throws {
        let facts = MediaFacts(
            duration: 3019,
            picture: PictureFacts(
                width: 1280, height: 720,
                thumbnail: .init(width: 800, height: 450, mimetype: "image/jpeg", size: 29235),
                blurhash: "LEHV6nWB2yk8"))
        let written = CanonicalJSON.string(facts.json)
        XCTAssertEqual(try JSONDecoder().decode(MediaFacts.self, from: Data(written.utf8)), facts)
        let sound = MediaFacts(duration: 2508)
        XCTAssertEqual(CanonicalJSON.string(sound.json), #"{"duration":2508}"#)
        XCTAssertEqual(try JSONDecoder().decode(MediaFacts.self, from: Data("{}".utf8)), MediaFacts(duration: nil))
    }

    func testADurationBelowZeroOrOverAWeekIsNotBelieved() {
        XCTAssertTrue(MediaFacts(duration: 0).isSound)
        XCTAssertTrue(MediaFacts(duration: MediaFacts.longestDuration).isSound)
        XCTAssertFalse(MediaFacts(duration: -1).isSound)
        XCTAssertFalse(MediaFacts(duration: MediaFacts.longestDuration + 1).isSound)
    }

    func testAPosterIsCheckedAsAPicturesThumbnailIs() {
        let tooLarge = PictureFacts(
            width: 3840, height: 2160, thumbnail: .init(width: 3840, height: 2160, mimetype: "image/jpeg", size: 9))
        XCTAssertFalse(MediaFacts(duration: 1000, picture: tooLarge).isSound)
        XCTAssertFalse(MediaFacts(duration: 1000, picture: PictureFacts(width: 0, height: 0)).isSound)
        XCTAssertTrue(MediaFacts(duration: 1000, picture: PictureFacts(width: 1, height: 1)).isSound)
    }
}
