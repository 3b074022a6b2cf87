import FerryCore
@testable import FerryOutbox
import XCTest

/// The sender's records: deliveries and steps, committed so that a restart resumes where it was.
final class DeliveryOutboxTests: XCTestCase {
    var directory: String!
    var outbox: Outbox!

    override func setUpWithError() throws {
        directory = NSTemporaryDirectory() + "ferry-delivery-tests-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        outbox = try Outbox(path: directory + "/ferry.sqlite3")
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func queuedShare(id: String, destinations: [String]) throws -> Share {
        let items = [
            ShareItem(kind: .file, name: "a.png", contentType: "image/png", size: 5, uri: "file:///a.png"),
            ShareItem(kind: .file, name: "b.png", contentType: "image/png", size: 7, uri: "file:///b.png"),
        ]
        let share = Share(
            id: id,
            intent: ShareIntent(
                items: items, subject: nil, message: "hi", destinations: destinations,
                source: .cli),
            state: .queued, created: 1, updated: 1)
        try outbox.insert(share)
        return share
    }

    func testBeginningASendCreatesADeliveryPerDestinationWithStableTransactionIDs() throws {
        let share = try queuedShare(id: "01share", destinations: ["!one", "#two:example.org"])
        let steps = Composition.steps(for: share.intent)

        let begun = try XCTUnwrap(
            outbox.beginSending(
                id: share.id, steps: steps, bytesTotal: 12, as: "@me:example.org", signIns: ["@me:example.org": 1],
                at: 2))

        XCTAssertEqual(begun.state, .sending)
        XCTAssertEqual(begun.deliveries.map(\.destination), ["!one", "#two:example.org"])
        XCTAssertEqual(begun.deliveries.map(\.eventsTotal), [3, 3])
        let first = try outbox.steps(shareID: share.id, position: 0)
        XCTAssertEqual(first.map(\.transactionID), ["ferry.01share.0.0", "ferry.01share.0.1", "ferry.01share.0.2"])
        XCTAssertEqual(first.map(\.item), [nil, 0, 1])
    }

    func testBeginningAgainAfterARestartKeepsTheStepsAndTheirProgress() throws {
        let share = try queuedShare(id: "01again", destinations: ["!one"])
        let steps = Composition.steps(for: share.intent)
        _ = try outbox.beginSending(
            id: share.id, steps: steps, bytesTotal: 12, as: "@me:example.org", signIns: ["@me:example.org": 1], at: 2)
        try outbox.recordEvent(try outbox.steps(shareID: share.id, position: 0)[0], eventID: "$first")

        let again = try XCTUnwrap(
            outbox.beginSending(
                id: share.id, steps: steps, bytesTotal: 12, as: "@me:example.org", signIns: ["@me:example.org": 1],
                at: 3))

        XCTAssertEqual(again.deliveries.count, 1)
        XCTAssertEqual(again.deliveries[0].eventsSent, 1)
        XCTAssertEqual(try outbox.steps(shareID: share.id, position: 0).map(\.eventID), ["$first", nil, nil])
    }

    func testAnUploadServesEveryDestination() throws {
        let share = try queuedShare(id: "01upload", destinations: ["!one", "!two"])
        _ = try outbox.beginSending(
            id: share.id, steps: Composition.steps(for: share.intent), bytesTotal: 12, as: "@me:example.org",
            signIns: ["@me:example.org": 1],
            at: 2)
        let fileStep = try outbox.steps(shareID: share.id, position: 0)[1]

        try outbox.recordUpload(fileStep, contentURI: "mxc://example.org/a")

        XCTAssertEqual(try outbox.steps(shareID: share.id, position: 1)[1].contentURI, "mxc://example.org/a")
        XCTAssertFalse(try outbox.allFilesUploaded(shareID: share.id))
        try outbox.recordUpload(try outbox.steps(shareID: share.id, position: 0)[2], contentURI: "mxc://example.org/b")
        XCTAssertTrue(try outbox.allFilesUploaded(shareID: share.id))
    }

    func testSigningOutParksQueuedAndSendingSharesOnly() throws {
        _ = try queuedShare(id: "01queued", destinations: ["!one"])
        let sending = try queuedShare(id: "01sending", destinations: ["!one"])
        _ = try outbox.beginSending(
            id: sending.id, steps: Composition.steps(for: sending.intent), bytesTotal: 12, as: "@me:example.org",
            signIns: ["@me:example.org": 1], at: 2)
        let waiting = try queuedShare(id: "01waiting", destinations: [])
        try outbox.update(id: waiting.id, state: .awaitingDestination, at: 2)

        let moved = try outbox.move(from: [.queued, .sending], to: .awaitingSignIn, at: 3)

        XCTAssertEqual(Set(moved), ["01queued", "01sending"])
        XCTAssertEqual(try outbox.share(id: "01waiting")?.state, .awaitingDestination)
        XCTAssertEqual(try outbox.share(id: "01sending")?.deliveries.count, 1, "deliveries survive the parking")
    }

    func testTheAccountIsKeptWithoutItsSecret() throws {
        XCTAssertNil(try outbox.account())
        let account = StoredAccount(
            userID: "@me:example.org", homeserver: "https://example.org", deviceID: "FERRY",
            signedIn: true, secretStorage: "file")

        try outbox.save(account: account)

        XCTAssertEqual(try outbox.account(), account)
    }
}
