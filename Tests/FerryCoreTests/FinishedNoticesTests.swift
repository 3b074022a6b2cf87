import FerryCore
import XCTest

/// What a person is told when shares finish: each on its own when they come one at a time, one
/// counting notice for a burst.
final class FinishedNoticesTests: XCTestCase {
    private let second: Int64 = 1_000_000

    private func share(_ id: String, _ state: ShareState, failure: String? = nil) -> Share {
        let text = ShareItem(kind: .text, name: "hello", contentType: "text/plain", size: 5, text: "hello")
        let intent = ShareIntent(items: [text], subject: nil, message: nil, destinations: ["!r:s"], source: .share)
        return Share(
            id: id, intent: intent, state: state, created: 0, updated: 0,
            failure: failure.map { Share.Failure(name: "io.github.ferryshare.Ferry.Error.Forbidden", message: $0) })
    }

    func testASentShareOnItsOwnNamesItsRooms() {
        var notices = FinishedNotices()
        let notice = notices.finished(share("a", .sent), rooms: ["Holiday", "Family"], at: 100 * second)
        XCTAssertEqual(notice?.title, "Shared")
        XCTAssertEqual(notice?.body, "Sent to Holiday and Family.")
        XCTAssertFalse(notices.hasPending)
    }

    func testSharesFarApartAreEachTheirOwnNotice() {
        var notices = FinishedNotices()
        XCTAssertEqual(notices.finished(share("a", .sent), rooms: ["A"], at: 0)?.body, "Sent to A.")
        XCTAssertEqual(notices.finished(share("b", .sent), rooms: ["B"], at: 11 * second)?.body, "Sent to B.")
    }

    func testABurstIsCountedInOneNoticeUpdatedAtMostOnceASecond() {
        var notices = FinishedNotices()
        XCTAssertNotNil(notices.finished(share("s0", .sent), rooms: ["Drain"], at: 0))
        // The next 99 within the same second are held back…
        for n in 1..<100 {
            XCTAssertNil(notices.finished(share("s\(n)", .sent), rooms: ["Drain"], at: Int64(n) * 5_000))
        }
        XCTAssertTrue(notices.hasPending)
        // …and told together when the caller flushes.
        let flushed = notices.flush(at: second)
        XCTAssertEqual(flushed.map(\.body), ["100 shares sent to Drain."])
        XCTAssertEqual(flushed.first?.id, "sent")
        XCTAssertFalse(notices.hasPending)
        XCTAssertEqual(notices.flush(at: 2 * second), [])
        // A share a second later in the same burst updates the count at once.
        XCTAssertEqual(
            notices.finished(share("s100", .sent), rooms: ["Other"], at: 2 * second)?.body,
            "101 shares sent to Drain and Other.")
    }

    func testALoneFailureOffersRetryForThatShare() {
        var notices = FinishedNotices()
        let notice = notices.finished(
            share("f", .failed, failure: "You may not post in Lobby."), rooms: ["Lobby"], at: 0)
        XCTAssertEqual(notice?.body, "You may not post in Lobby.")
        XCTAssertEqual(notice?.retryShareID, "f")
        XCTAssertEqual(notice?.id, "share-f")
    }

    func testABurstOfFailuresIsOneNoticeThatLeadsToTheShares() {
        var notices = FinishedNotices()
        _ = notices.finished(share("f1", .failed, failure: "No."), rooms: ["A"], at: 0)
        _ = notices.finished(share("f2", .failed, failure: "No."), rooms: ["A"], at: 10)
        let same = notices.flush(at: second)
        XCTAssertEqual(same.first?.title, "Ferry could not send 2 shares")
        XCTAssertEqual(same.first?.body, "No.")
        XCTAssertEqual(same.first?.showsShares, true)
        XCTAssertNil(same.first?.retryShareID)
        let mixed = notices.finished(share("f3", .failed, failure: "Too big."), rooms: ["A"], at: 3 * second)
        XCTAssertEqual(mixed?.title, "Ferry could not send 3 shares")
        XCTAssertEqual(mixed?.body, "Open Ferry to see why, and to retry them.")
    }

    func testSentAndFailedAreToldApart() {
        var notices = FinishedNotices()
        XCTAssertEqual(notices.finished(share("s", .sent), rooms: ["A"], at: 0)?.title, "Shared")
        XCTAssertEqual(notices.finished(share("f", .failed, failure: "No."), rooms: ["A"], at: 10)?.retryShareID, "f")
    }

    func testOtherStatesAreNotNotices() {
        var notices = FinishedNotices()
        XCTAssertNil(notices.finished(share("c", .cancelled), rooms: ["A"], at: 0))
        XCTAssertFalse(notices.hasPending)
    }

    func testLongRoomListsAreShortened() {
        var notices = FinishedNotices()
        let notice = notices.finished(share("a", .sent), rooms: ["A", "B", "C", "D", "E"], at: 0)
        XCTAssertEqual(notice?.body, "Sent to A, B, C and 2 more.")
    }
}
