import FerryCore
import FerryMatrix
import FerryOutbox
import FerryStaging
import Foundation
import Synchronization
import XCTest
@testable import FerrySender

/// One sender for every signed-in account: each share goes out as its own account's session and
/// to its homeserver, and an account signed out (here, or by its server) holds back its own
/// shares only.
final class SeveralAccountsTests: SenderTestCase {
    private let work = Session(
        userID: "@me:work.test", homeserver: "work", deviceID: "W", accessToken: "tw", signIn: 1)
    private let home = Session(
        userID: "@me:home.test", homeserver: "home", deviceID: "H", accessToken: "th", signIn: 2)
    private let workServer = InMemoryHomeserver(rooms: ["!w"])
    private let homeServer = InMemoryHomeserver(rooms: ["!h"])

    func testEachShareGoesOutAsItsOwnAccountToItsOwnHomeserver() async throws {
        let sessions = SignedInSessions([home, work])
        let forWork = try queue("for work", to: "!w", as: work.userID)
        let forHome = try queue("for home", to: "!h", as: home.userID)

        start(sessions)
        try await waitUntil { self.state(of: forWork) == .sent && self.state(of: forHome) == .sent }

        XCTAssertEqual(workServer.events(in: "!w").map(\.body), ["for work"])
        XCTAssertEqual(homeServer.events(in: "!h").map(\.body), ["for home"])
        XCTAssertTrue(workServer.events(in: "!h").isEmpty && homeServer.events(in: "!w").isEmpty)
        XCTAssertEqual(try outbox.share(id: forWork.id)?.deliveries.first?.signIn, work.signIn)
        XCTAssertEqual(try outbox.share(id: forHome.id)?.deliveries.first?.signIn, home.signIn)
    }

    func testTheSharesOfAnAccountNotSignedInWaitForItAndTheOthersGo() async throws {
        let sessions = SignedInSessions([work])
        let forWork = try queue("for work", to: "!w", as: work.userID)
        let forHome = try queue("for home", to: "!h", as: home.userID)

        start(sessions)
        try await waitUntil { self.state(of: forWork) == .sent && self.state(of: forHome) == .awaitingSignIn }

        XCTAssertEqual(try outbox.share(id: forHome.id)?.account, home.userID, "it still waits for its own account")
        XCTAssertTrue(homeServer.events(in: "!h").isEmpty && workServer.events(in: "!h").isEmpty)
    }

    func testAServerEndingOneSignInHoldsBackOnlyThatAccountsShares() async throws {
        let sessions = SignedInSessions([home, work])
        homeServer.failSends(.unknownToken)
        let forHome = try queue("for home", to: "!h", as: home.userID)
        let sender = start(sessions)
        try await waitUntil { self.state(of: forHome) == .awaitingSignIn }

        let forWork = try queue("for work", to: "!w", as: work.userID)
        sender.wake()
        try await waitUntil { self.state(of: forWork) == .sent }

        XCTAssertEqual(state(of: forHome), .awaitingSignIn)
        XCTAssertEqual(sessions.invalidated, [home.accessToken])
        XCTAssertTrue(homeServer.events(in: "!h").isEmpty)
    }

    @discardableResult
    private func start(_ sessions: SignedInSessions) -> Sender {
        let (workServer, homeServer, work) = (workServer, homeServer, work)
        let sender = Sender(
            outbox: outbox, spool: spool, account: sessions, backoff: Backoff(initial: 1_000, maximum: 5_000),
            logger: TestLog.logger, clock: SystemClock.microseconds,
            connect: { $0.userID == work.userID ? workServer : homeServer })
        sender.start()
        sender.wake()
        return sender
    }

    private func state(of share: Share) -> ShareState? { try? outbox.state(of: share.id) }

    private func queue(_ text: String, to room: String, as account: String) throws -> Share {
        let id = "01kaccounts" + String(UUID().uuidString.lowercased().filter(\.isLetter).prefix(15))
        let intent = ShareIntent(items: [.text(text)], subject: nil, message: nil, destinations: [room], source: .cli)
        let share = Share(id: id, intent: intent, state: .queued, created: 1, updated: 1, account: account)
        try outbox.insert(share)
        return share
    }
}

/// Sessions signed in; a token the sender reports ended is recorded, and its session signed out.
final class SignedInSessions: SessionSource {
    private let signedIn: Mutex<[Session]>
    private let ended = Mutex<[String]>([])

    init(_ sessions: [Session]) { signedIn = Mutex(sessions) }

    var invalidated: [String] { ended.withLock { $0 } }

    func tokenRead() async {}
    var sessions: [Session] { signedIn.withLock { $0 } }
    func session(of userID: String) -> Session? { sessions.first { $0.userID == userID } }
    func sessionIfRead(of userID: String) -> Session? { session(of: userID) }
    func invalidate(token: String) {
        ended.withLock { $0.append(token) }
        signedIn.withLock { $0.removeAll { $0.accessToken == token } }
    }
}
