import FerryCore
import FerryMatrix
import FerryOutbox
import FerryStaging
import Foundation
import Logging
import XCTest
@testable import FerrySender

/// The sender's exactly-once logic against an in-memory homeserver: order inside a share, the
/// same transaction id when an answer is lost, resuming at the first step without an event after
/// a restart, and one destination's refusal leaving the others going.
final class ExactlyOnceTests: SenderTestCase {

    func testAMessageGoesFirstThenEachFileAsItsOwnEventEachOnce() async throws {
        let server = InMemoryHomeserver(rooms: ["!a"])
        let share = try queue(message: "look", files: ["a.png": 100, "b.txt": 5], to: ["!a"])

        try await deliver(share, through: server)

        XCTAssertEqual(server.events(in: "!a").map(\.body), ["look", "a.png", "b.txt"])
        XCTAssertEqual(server.events(in: "!a").map(\.msgtype), ["m.text", "m.image", "m.file"])
        XCTAssertEqual(server.uploads, 2)
        XCTAssertEqual(try outbox.state(of: share.id), .sent)
    }

    func testAnAnswerLostAfterTheServerStoredTheEventIsAskedAgainWithTheSameTransactionID() async throws {
        let server = InMemoryHomeserver(rooms: ["!a"])
        server.failSends(.lostAnswer)
        let share = try queue(message: "once", files: [:], to: ["!a"])

        try await deliver(share, through: server)

        XCTAssertEqual(server.events(in: "!a").map(\.body), ["once"])
        XCTAssertEqual(server.sendRequests.count, 2)
        XCTAssertEqual(Set(server.sendRequests).count, 1, "the repeat must carry the same transaction id")
    }

    func testServerErrorsAreRetriedUntilTheEventGoesOnce() async throws {
        let server = InMemoryHomeserver(rooms: ["!a"])
        server.failSends(.serverError, .serverError, .serverError)
        let share = try queue(message: "patient", files: [:], to: ["!a"])

        try await deliver(share, through: server)

        XCTAssertEqual(server.events(in: "!a").map(\.body), ["patient"])
        XCTAssertEqual(server.sendRequests.count, 4)
    }

    func testARestartResumesAtTheFirstStepWithoutAnEventWithItsTransactionID() async throws {
        let server = InMemoryHomeserver(rooms: ["!a"])
        let share = try queue(message: nil, files: ["first.txt": 4, "second.txt": 10], to: ["!a"])
        // The first run sends the first file, then "dies" while the second's event request waits.
        server.failSends(.serverError, .none, .hang)
        let first = sender(server)
        first.start()
        first.wake()
        try await waitUntil { server.sendRequests.count == 3 } // the first failed once, sent; the second's hangs
        let hungTransaction = server.sendRequests.last!
        XCTAssertEqual(server.events(in: "!a").map(\.body), ["first.txt"])

        // A new sender on the same outbox (the service started again) finishes the share.
        try await deliver(share, through: server)

        XCTAssertEqual(server.events(in: "!a").map(\.body), ["first.txt", "second.txt"])
        XCTAssertEqual(server.events(in: "!a").last?.transactionID, hungTransaction)
        XCTAssertEqual(server.uploads, 2, "each file's upload was recorded and not repeated")
    }

    func testOneDestinationRefusingLeavesTheOthersGoing() async throws {
        let server = InMemoryHomeserver(rooms: ["!ok", "!closed"], forbidden: ["!closed"])
        let share = try queue(message: "to both", files: [:], to: ["!closed", "!ok"])

        try await deliver(share, through: server, until: [.failed])

        XCTAssertEqual(server.events(in: "!ok").map(\.body), ["to both"])
        XCTAssertEqual(server.events(in: "!closed"), [])
        let deliveries = try XCTUnwrap(try outbox.share(id: share.id)).deliveries
        XCTAssertEqual(deliveries.map(\.state), [.failed, .sent])
        XCTAssertEqual(deliveries.first?.failure?.name, ShareError.namePrefix + "Forbidden")
    }

    func testAnEventSentUnderAnEarlierSignInIsFoundInTheRoomNotSentAgain() async throws {
        let server = InMemoryHomeserver(rooms: ["!a"])
        let share = try queue(message: nil, files: ["first.txt": 4, "second.txt": 10], to: ["!a"])
        // Signed in the first time: the first file goes out, and the server stores the second's event
        // but the process is gone before the answer comes.
        server.failSends(.none, .storedThenHang)
        let first = sender(server, signIn: 1)
        first.start()
        first.wake()
        try await waitUntil { server.sendRequests.count == 2 && server.events(in: "!a").count == 2 }
        // Signed out (the server deletes the device and forgets its transaction ids), signed in again.
        server.forgetTransactions()

        try await deliver(share, through: server, signIn: 2)

        XCTAssertEqual(server.events(in: "!a").map(\.body), ["first.txt", "second.txt"], "nothing went out twice")
        XCTAssertEqual(server.sendRequests.count, 2, "the file's event was found in the room, not sent again")
        XCTAssertEqual(server.lookups, 1)
        XCTAssertEqual(try outbox.share(id: share.id)?.deliveries.first?.eventsSent, 2)
    }

    func testEveryEventCarriesItsTransactionIDAndTheSameSignInNeverLooksInTheRoom() async throws {
        let server = InMemoryHomeserver(rooms: ["!a"])
        server.failSends(.lostAnswer)
        let share = try queue(message: "tagged", files: ["f.txt": 3, "g.txt": 2], to: ["!a"])

        try await deliver(share, through: server)

        let events = server.events(in: "!a")
        XCTAssertEqual(events.map(\.body), ["tagged", "f.txt", "g.txt"])
        XCTAssertEqual(events.map(\.tag), events.map(\.transactionID))
        XCTAssertEqual(server.lookups, 0, "under one sign-in the transaction id is enough")
    }

    func testAShareQueuedAsAnotherPersonWaitsForThemAndNothingIsSent() async throws {
        let server = InMemoryHomeserver(rooms: ["!a"])
        let theirs = try queue(message: "theirs", files: [:], to: ["!a"], account: "@someone:memory.test")
        let mine = try queue(message: "mine", files: [:], to: ["!a"], account: nil)

        try await deliver(mine, through: server)

        XCTAssertEqual(server.events(in: "!a").map(\.body), ["mine"])
        XCTAssertEqual(try outbox.state(of: theirs.id), .awaitingSignIn)
        XCTAssertEqual(try outbox.share(id: theirs.id)?.account, "@someone:memory.test")
        XCTAssertEqual(try outbox.share(id: mine.id)?.account, "@me:memory.test", "taken up as the one signed in")
    }

    // MARK: - Helpers

    private func queue(
        message: String?, files: KeyValuePairs<String, UInt64>, to destinations: [String],
        account: String? = nil
    ) throws -> Share {
        let id = "01ksender" + String(UUID().uuidString.lowercased().filter(\.isLetter).prefix(17))
        // A share without files carries its words as a text item (a share has at least one item).
        var items: [ShareItem] = files.isEmpty ? [.text(message ?? "")] : []
        try FileManager.default.createDirectory(atPath: spool.directory(for: id), withIntermediateDirectories: true)
        for (position, (name, size)) in files.enumerated() {
            let type = name.hasSuffix(".png") ? "image/png" : "text/plain"
            items.append(ShareItem(kind: .file, name: name, contentType: type, size: size, uri: "file:///tmp/\(name)"))
            let staged = spool.path(for: id, position: position)
            XCTAssertTrue(FileManager.default.createFile(atPath: staged, contents: Data(count: Int(size))), staged)
        }
        let intent = ShareIntent(
            items: items, subject: nil, message: files.isEmpty ? nil : message,
            destinations: destinations, source: .cli)
        let share = Share(id: id, intent: intent, state: .queued, created: 1, updated: 1, account: account)
        try outbox.insert(share)
        return share
    }

    private func sender(_ server: InMemoryHomeserver, signIn: Int64 = 1) -> Sender {
        .inMemory(outbox: outbox, spool: spool, server: server, signIn: signIn)
    }

    private func deliver(
        _ share: Share, through server: InMemoryHomeserver, until states: Set<ShareState> = [.sent],
        signIn: Int64 = 1
    ) async throws {
        let sender = sender(server, signIn: signIn)
        sender.start()
        sender.wake()
        try await waitUntil { states.contains((try? self.outbox.state(of: share.id)) ?? .queued) }
    }
}
