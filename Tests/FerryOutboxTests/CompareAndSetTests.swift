import FerryCore
import FerryOutbox
import XCTest

/// State changes are compare-and-set: of two actors changing one share, only one wins.
final class CompareAndSetTests: OutboxTestCase {
    func testAChangeFromAStateTheShareIsNoLongerInDoesNothing() throws {
        let share = SampleShares.text(id: "01kaaaaaaaaaaaaaaaaaaaaac1", created: 5, state: .sending)
        try outbox.insert(share)
        // A person cancels…
        XCTAssertEqual(
            try outbox.update(id: share.id, state: .cancelled, at: 6, from: [.queued, .sending, .failed])?.state,
            .cancelled)

        // …and the sender, which read "sending" before, settles it: it does not win.
        XCTAssertNil(try outbox.update(id: share.id, state: .sent, at: 7, from: [.sending]))
        XCTAssertEqual(try outbox.state(of: share.id), .cancelled)
    }

    func testACancelledShareIsNotTakenUpForSendingAgain() throws {
        let share = SampleShares.text(id: "01kaaaaaaaaaaaaaaaaaaaaac2", created: 5, state: .queued)
        try outbox.insert(share)
        _ = try outbox.update(id: share.id, state: .cancelled, at: 6)

        let begun = try outbox.beginSending(
            [.init(id: share.id, steps: Composition.steps(for: share.intent), bytesTotal: 0)], as: "@me:example.org",
            signIns: ["@me:example.org": 1], at: 7)

        XCTAssertEqual(begun, [])
        XCTAssertEqual(try outbox.state(of: share.id), .cancelled)
    }

    func testCompletingAShareCancelledMeanwhileDoesNotReviveIt() throws {
        let share = SampleShares.text(id: "01kaaaaaaaaaaaaaaaaaaaaac4", created: 5, state: .awaitingDestination)
        try outbox.insert(share)
        // The dialog read "awaiting destination"; meanwhile the person cancels from the command line…
        _ = try outbox.update(id: share.id, state: .cancelled, at: 6, from: [.awaitingDestination])

        // …and the dialog's Share arrives: it does not win.
        XCTAssertNil(
            try outbox.complete(
                id: share.id, destinations: ["!room:example.org"], message: nil, state: .queued,
                accounts: ["@me:example.org"], at: 7))
        XCTAssertEqual(try outbox.state(of: share.id), .cancelled)
    }

    func testCompletingAWaitingShareQueuesIt() throws {
        let share = SampleShares.text(id: "01kaaaaaaaaaaaaaaaaaaaaac5", created: 5, state: .awaitingDestination)
        try outbox.insert(share)

        let completed = try outbox.complete(
            id: share.id, destinations: ["!room:example.org"], message: "hi", state: .queued,
            accounts: ["@me:example.org"], at: 7)

        XCTAssertEqual(completed?.state, .queued)
        XCTAssertEqual(completed?.intent.destinations, ["!room:example.org"])
    }

    func testWithoutAnExpectedStateTheChangeIsUnconditional() throws {
        let share = SampleShares.text(id: "01kaaaaaaaaaaaaaaaaaaaaac3", created: 5, state: .failed)
        try outbox.insert(share)
        XCTAssertEqual(try outbox.update(id: share.id, state: .sending, at: 6)?.state, .sending)
    }
}
