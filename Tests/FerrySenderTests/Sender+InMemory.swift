import FerryCore
import FerryMatrix
import Foundation
import XCTest
import FerryOutbox
import FerryStaging
import Logging
@testable import FerrySender

extension Sender {
    /// A sender signed in as `@me:memory.test` (device and token named after `signIn`) that talks to
    /// `server` only, retrying within milliseconds.
    static func inMemory(outbox: Outbox, spool: Spool, server: InMemoryHomeserver, signIn: Int64 = 1) -> Sender {
        let session = Session(
            userID: "@me:memory.test", homeserver: "memory", deviceID: "D\(signIn)",
            accessToken: "t\(signIn)", signIn: signIn)
        return Sender(
            outbox: outbox, spool: spool, account: FixedSession(session: session),
            backoff: Backoff(initial: 1_000, maximum: 5_000), logger: TestLog.logger, clock: SystemClock.microseconds,
            connect: { _ in server })
    }
}

/// One signed-in session, always there.
struct FixedSession: SessionSource {
    let session: Session
    func tokenRead() async {}
    var sessions: [Session] { [session] }
    func session(of userID: String) -> Session? { userID == session.userID ? session : nil }
    func sessionIfRead(of userID: String) -> Session? { session(of: userID) }
    func invalidate(token: String) {}
}

/// A sender test's own outbox and spool in a temporary directory, removed afterwards.
class SenderTestCase: XCTestCase {
    var root: URL!
    var outbox: Outbox!
    var spool: Spool!

    override func setUpWithError() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-sender-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        outbox = try Outbox(path: root.appendingPathComponent("ferry.sqlite3").path)
        spool = try Spool(root: root.appendingPathComponent("spool").path)
    }

    override func tearDownWithError() throws {
        outbox = nil
        try? FileManager.default.removeItem(at: root)
    }
}
