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

    func testEachHomeserversUploadLimitIsItsOwn() async throws {
        // The work server takes files up to 1 KiB; the home server says nothing of a limit.
        let small = InMemoryHomeserver(rooms: ["!w"], largestUpload: 1024)
        let sessions = SignedInSessions([home, work])
        let (homeServer, work) = (homeServer, work)
        let sender = Sender(
            outbox: outbox, spool: spool, account: sessions, backoff: Backoff(initial: 1_000, maximum: 5_000),
            logger: TestLog.logger, clock: SystemClock.microseconds,
            connect: { $0.userID == work.userID ? small : homeServer })
        let forWork = try queue("big.png", to: ["!w"], as: [work.userID], file: 4096)
        sender.start()
        sender.wake()
        try await waitUntil { self.state(of: forWork) == .failed }

        // The home server's answer is not the work server's (nor the other way round).
        let forHome = try queue("big.png", to: ["!h"], as: [home.userID], file: 4096)
        sender.wake()
        try await waitUntil { self.state(of: forHome) == .sent }

        XCTAssertEqual(
            try outbox.share(id: forWork.id)?.deliveries.first?.failure?.name,
            "io.github.ferryshare.Ferry.Error.FileTooLargeForServer")
        XCTAssertEqual(homeServer.events(in: "!h").map(\.body), ["big.png"])
    }

    // MARK: - One share, the rooms of several accounts

    func testOneShareToTheRoomsOfTwoAccountsGoesToEachAsItsOwnAccount() async throws {
        let sessions = SignedInSessions([home, work])
        let both = try queue("for both", to: ["!w", "!h"], as: [work.userID, home.userID])

        start(sessions)
        try await waitUntil { self.state(of: both) == .sent }

        XCTAssertEqual(workServer.events(in: "!w").map(\.body), ["for both"])
        XCTAssertEqual(homeServer.events(in: "!h").map(\.body), ["for both"])
        XCTAssertTrue(workServer.events(in: "!h").isEmpty && homeServer.events(in: "!w").isEmpty)
        XCTAssertEqual(
            try outbox.share(id: both.id)?.deliveries.map(\.signIn), [work.signIn, home.signIn],
            "each delivery begins under its own account's sign-in")
    }

    func testAFileForTwoAccountsRoomsIsUploadedToEachAccountsServer() async throws {
        let sessions = SignedInSessions([home, work])
        let both = try queue(
            "photo.png", to: ["!w", "!h"], as: [work.userID, home.userID], file: 4096)

        start(sessions)
        try await waitUntil { self.state(of: both) == .sent }

        XCTAssertEqual(workServer.uploads, 1)
        XCTAssertEqual(homeServer.uploads, 1, "the home room's event names a file on its own server")
        XCTAssertEqual(homeServer.events(in: "!h").map(\.body), ["photo.png"])
    }

    func testTheDeliveriesOfAnAccountSignedInGoAndTheShareWaitsForTheOther() async throws {
        let sessions = SignedInSessions([work])
        let both = try queue("for both", to: ["!w", "!h"], as: [work.userID, home.userID])
        let sender = start(sessions)
        try await waitUntil { self.state(of: both) == .awaitingSignIn }

        XCTAssertEqual(workServer.events(in: "!w").map(\.body), ["for both"])
        XCTAssertTrue(homeServer.events(in: "!h").isEmpty && workServer.events(in: "!h").isEmpty)
        XCTAssertEqual(try outbox.share(id: both.id)?.accountsStillSending, [home.userID])

        // Signing in at home resumes it (as the service does); the work room gets nothing twice.
        sessions.signIn(home)
        try outbox.update(id: both.id, state: .sending, at: 5, from: [.awaitingSignIn], account: home.userID)
        sender.wake(now: true)
        try await waitUntil { self.state(of: both) == .sent }

        XCTAssertEqual(workServer.events(in: "!w").map(\.body), ["for both"])
        XCTAssertEqual(homeServer.events(in: "!h").map(\.body), ["for both"])
        XCTAssertEqual(try outbox.share(id: both.id)?.account, work.userID, "the share stays its first account's")
    }

    func testWithNoneOfItsAccountsSignedInAShareForTwoAccountsWaits() async throws {
        let sessions = SignedInSessions([
            Session(
                userID: "@other:else.test", homeserver: "else", deviceID: "E", accessToken: "te", signIn: 3)
        ])
        let both = try queue("for both", to: ["!w", "!h"], as: [work.userID, home.userID])

        start(sessions)
        try await waitUntil { self.state(of: both) == .awaitingSignIn }

        XCTAssertTrue(homeServer.events(in: "!h").isEmpty && workServer.events(in: "!w").isEmpty)
        XCTAssertEqual(try outbox.share(id: both.id)?.deliveries, [], "never taken up as someone else")
    }

    func testAServerEndingOneSignInMidShareLetsTheOtherAccountsDeliveryGo() async throws {
        let sessions = SignedInSessions([home, work])
        homeServer.failSends(.unknownToken)
        let both = try queue("for both", to: ["!h", "!w"], as: [home.userID, work.userID])

        start(sessions)
        try await waitUntil { self.state(of: both) == .awaitingSignIn }

        XCTAssertEqual(workServer.events(in: "!w").map(\.body), ["for both"])
        XCTAssertTrue(homeServer.events(in: "!h").isEmpty)
        XCTAssertEqual(sessions.invalidated, [home.accessToken])
        XCTAssertEqual(try outbox.share(id: both.id)?.accountsStillSending, [home.userID])
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
        try queue(text, to: [room], as: [account])
    }

    /// A share to `rooms`, each as the account at its place; with `file`, a file of that size named `text`.
    private func queue(_ text: String, to rooms: [String], as accounts: [String], file: UInt64? = nil) throws -> Share {
        let id = "01kaccounts" + String(UUID().uuidString.lowercased().filter(\.isLetter).prefix(15))
        var items: [ShareItem] = [.text(text)]
        if let file {
            try FileManager.default.createDirectory(atPath: spool.directory(for: id), withIntermediateDirectories: true)
            XCTAssertTrue(
                FileManager.default.createFile(
                    atPath: spool.path(for: id, position: 0), contents: Data(count: Int(file))))
            items = [
                ShareItem(kind: .file, name: text, contentType: "image/png", size: file, uri: "file:///tmp/\(text)")
            ]
        }
        let intent = ShareIntent(items: items, subject: nil, message: nil, destinations: rooms, source: .cli)
        let (account, perDestination) = Share.destinationAccounts(accounts)
        let share = Share(
            id: id, intent: intent, state: .queued, created: 1, updated: 1, account: account,
            destinationAccounts: perDestination)
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
    func signIn(_ session: Session) { signedIn.withLock { $0.insert(session, at: 0) } }
    func invalidate(token: String) {
        ended.withLock { $0.append(token) }
        signedIn.withLock { $0.removeAll { $0.accessToken == token } }
    }
}
