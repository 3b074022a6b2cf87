import FerryCore
import FerryOutbox
import Foundation
import Synchronization
import XCTest

/// The outbox keeps every share exactly as it was committed, and answers questions about them.
final class OutboxTests: OutboxTestCase {
    func testAnInsertedShareReadsBackEqualWithItemsInOrder() throws {
        let share = SampleShares.files(id: "01kaaaaaaaaaaaaaaaaaaaaaa1")

        try outbox.insert(share)

        XCTAssertEqual(try outbox.share(id: share.id), share)
        XCTAssertEqual(
            try outbox.share(id: share.id)?.intent.items.map(\.name), ["a.png", "evil\n\u{202E}gnp.exe", "b.jpg"])
    }

    func testAbsentSubjectMessageAndDestinationsReadBackAbsent() throws {
        let share = SampleShares.text(id: "01kaaaaaaaaaaaaaaaaaaaaaa2", created: 5)

        try outbox.insert(share)

        let stored = try XCTUnwrap(try outbox.share(id: share.id))
        XCTAssertEqual(stored, share)
        XCTAssertNil(stored.intent.subject)
        XCTAssertNil(stored.intent.message)
        XCTAssertEqual(stored.intent.destinations, [])
        XCTAssertNil(stored.failure)
    }

    func testAFailureIsStoredWithTheShare() throws {
        var share = SampleShares.link(id: "01kaaaaaaaaaaaaaaaaaaaaaa3", created: 5, state: .failed)
        share.failure = Share.Failure(name: "io.github.ferryshare.Ferry.Error.StagingFailed", message: "Disk full.")

        try outbox.insert(share)

        XCTAssertEqual(try outbox.share(id: share.id), share)
    }

    func testAnUnknownIDHasNoShare() throws {
        XCTAssertNil(try outbox.share(id: "01kzzzzzzzzzzzzzzzzzzzzzzz"))
    }

    func testTheSameIDCannotBeInsertedTwice() throws {
        let share = SampleShares.text(id: "01kaaaaaaaaaaaaaaaaaaaaaa4", created: 5)
        try outbox.insert(share)

        XCTAssertThrowsError(try outbox.insert(share))
        XCTAssertEqual(try outbox.shares().count, 1)
    }

    func testSharesInsertedFromManyThreadsAtOnceAreEachCommittedOnce() throws {
        // Group commit: whichever thread writes next commits the others' waiting shares too.
        let outbox = self.outbox!
        let failures = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for n in 0..<50 {
                let id = String(format: "01kbbbbbbbbbbbbbbbbbbb%02d%02d", thread, n)
                do { try outbox.insert(SampleShares.text(id: id, created: Int64(thread * 100 + n))) } catch {
                    failures.withLock { $0 += 1 }
                }
            }
        }

        XCTAssertEqual(failures.withLock { $0 }, 0)
        XCTAssertEqual(try outbox.ids().count, 400)
        XCTAssertEqual(try outbox.shares().map(\.intent.items.count), Array(repeating: 1, count: 400))
    }

    func testARefusedInsertLeavesTheOutboxTakingShares() throws {
        let share = SampleShares.text(id: "01kaaaaaaaaaaaaaaaaaaaaaa9", created: 5)
        try outbox.insert(share)
        XCTAssertThrowsError(try outbox.insert(share))
        // The outbox goes on taking shares after a refused one.
        XCTAssertNoThrow(try outbox.insert(SampleShares.text(id: "01kaaaaaaaaaaaaaaaaaaaaaa8", created: 6)))
        XCTAssertEqual(try outbox.ids(), [share.id, "01kaaaaaaaaaaaaaaaaaaaaaa8"])
    }

    func testSharesAreListedNewestFirst() throws {
        try outbox.insert(SampleShares.text(id: "01kaaaaaaaaaaaaaaaaaaaaaab", created: 2_000))
        try outbox.insert(SampleShares.files(id: "01kaaaaaaaaaaaaaaaaaaaaaac", created: 3_000))
        try outbox.insert(SampleShares.link(id: "01kaaaaaaaaaaaaaaaaaaaaaaa", created: 1_000))

        let shares = try outbox.shares()

        XCTAssertEqual(
            shares.map(\.id),
            ["01kaaaaaaaaaaaaaaaaaaaaaac", "01kaaaaaaaaaaaaaaaaaaaaaab", "01kaaaaaaaaaaaaaaaaaaaaaaa"])
        XCTAssertEqual(
            shares[0], SampleShares.files(id: "01kaaaaaaaaaaaaaaaaaaaaaac", created: 3_000),
            "listed shares carry their items too")
    }

    func testSharesMadeInTheSameMicrosecondAreListedByIDNewestFirst() throws {
        try outbox.insert(SampleShares.text(id: "01kaaaaaaaaaaaaaaaaaaaaaa1", created: 7))
        try outbox.insert(SampleShares.text(id: "01kaaaaaaaaaaaaaaaaaaaaaa2", created: 7))

        XCTAssertEqual(try outbox.shares().map(\.id), ["01kaaaaaaaaaaaaaaaaaaaaaa2", "01kaaaaaaaaaaaaaaaaaaaaaa1"])
    }

    func testAnEmptyOutboxListsNothing() throws {
        XCTAssertEqual(try outbox.shares(), [])
        XCTAssertEqual(try outbox.ids(), [])
        XCTAssertEqual(try outbox.countsByState(), [:])
    }

    func testUpdatingTheStateRecordsTheFailureAndTheTimeButKeepsTheRest() throws {
        let share = SampleShares.files(id: "01kaaaaaaaaaaaaaaaaaaaaaa5", created: 1_000, state: .queued)
        try outbox.insert(share)
        let failure = Share.Failure(name: "io.github.ferryshare.Ferry.Error.RemoteReadFailed", message: "Gone.")

        let updated = try outbox.update(id: share.id, state: .failed, failure: failure, at: 2_500)

        var expected = share
        expected.state = .failed
        expected.failure = failure
        expected.updated = 2_500
        XCTAssertEqual(updated, expected)
        XCTAssertEqual(try outbox.share(id: share.id), expected)
        XCTAssertEqual(try outbox.share(id: share.id)?.created, 1_000)
    }

    func testUpdatingWithoutAFailureClearsAnEarlierOne() throws {
        let share = SampleShares.link(id: "01kaaaaaaaaaaaaaaaaaaaaaa6", created: 1_000)
        try outbox.insert(share)
        try outbox.update(id: share.id, state: .failed, failure: Share.Failure(name: "x.Y", message: "m"), at: 2_000)

        try outbox.update(id: share.id, state: .queued, at: 3_000)

        let stored = try XCTUnwrap(try outbox.share(id: share.id))
        XCTAssertEqual(stored.state, .queued)
        XCTAssertNil(stored.failure)
        XCTAssertEqual(stored.updated, 3_000)
    }

    func testUpdatingAnUnknownShareReturnsNil() throws {
        XCTAssertNil(try outbox.update(id: "01kzzzzzzzzzzzzzzzzzzzzzzz", state: .cancelled, at: 1))
    }

    func testIDsAreEveryInsertedShare() throws {
        try outbox.insert(SampleShares.text(id: "01kaaaaaaaaaaaaaaaaaaaaaa1", created: 1))
        try outbox.insert(SampleShares.link(id: "01kaaaaaaaaaaaaaaaaaaaaaa2", created: 2))

        XCTAssertEqual(try outbox.ids(), ["01kaaaaaaaaaaaaaaaaaaaaaa1", "01kaaaaaaaaaaaaaaaaaaaaaa2"])
    }

    func testTheSharesNeedingFilesAreAllButTheSentAndCancelled() throws {
        let states: [ShareState] = [
            .awaitingSignIn, .awaitingDestination, .queued, .sending, .failed, .sent, .cancelled,
        ]
        for (index, state) in states.enumerated() {
            try outbox.insert(
                SampleShares.text(id: "01kaaaaaaaaaaaaaaaaaaaaaa\(index)", created: Int64(index), state: state))
        }

        XCTAssertEqual(try outbox.idsNeedingFiles(), Set((0..<5).map { "01kaaaaaaaaaaaaaaaaaaaaaa\($0)" }))
    }

    func testCountsByStateCountEachState() throws {
        try outbox.insert(SampleShares.text(id: "01kaaaaaaaaaaaaaaaaaaaaaa1", created: 1, state: .awaitingSignIn))
        try outbox.insert(SampleShares.text(id: "01kaaaaaaaaaaaaaaaaaaaaaa2", created: 2, state: .awaitingSignIn))
        try outbox.insert(SampleShares.link(id: "01kaaaaaaaaaaaaaaaaaaaaaa3", created: 3, state: .queued))
        try outbox.insert(SampleShares.link(id: "01kaaaaaaaaaaaaaaaaaaaaaa4", created: 4, state: .queued))
        try outbox.update(id: "01kaaaaaaaaaaaaaaaaaaaaaa4", state: .sent, at: 5)

        XCTAssertEqual(try outbox.countsByState(), [.awaitingSignIn: 2, .queued: 1, .sent: 1])
    }

    func testACountStopsAtItsLimitAndPresenceIsAskedWithoutCounting() throws {
        for n in 1...5 {
            try outbox.insert(
                SampleShares.text(id: "01kaaaaaaaaaaaaaaaaaaaaab\(n)", created: Int64(n), state: .awaitingSignIn))
        }
        try outbox.insert(SampleShares.link(id: "01kaaaaaaaaaaaaaaaaaaaaac1", created: 9, state: .queued))

        XCTAssertEqual(try outbox.count(in: .awaitingSignIn), 5)
        XCTAssertEqual(try outbox.count(in: .awaitingSignIn, upTo: 3), 3)
        XCTAssertEqual(try outbox.count(in: .sending, upTo: 3), 0)
        XCTAssertTrue(try outbox.hasShares(in: [.sending, .queued]))
        XCTAssertFalse(try outbox.hasShares(in: [.sending, .sent]))
        XCTAssertFalse(try outbox.hasShares(in: []))
    }
}
