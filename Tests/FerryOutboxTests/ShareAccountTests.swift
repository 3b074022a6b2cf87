@testable import FerryOutbox
import FerryCore
import GRDB
import XCTest

/// A share is sent as the person it was queued under, never as anyone else (Share.account).
final class ShareAccountTests: OutboxTestCase {
    func testAnotherPersonsQueuedSharesGoBackToWaitingAndKeepWhoseTheyAre() throws {
        var alices = SampleShares.link(id: "01kaaaaaaaaaaaaaaaaaaaaaa1", created: 1, state: .queued)
        alices.account = "@alice:example.org"
        var bobs = SampleShares.link(id: "01kaaaaaaaaaaaaaaaaaaaaaa2", created: 2, state: .queued)
        bobs.account = "@bob:example.org"
        let nobodys = SampleShares.link(id: "01kaaaaaaaaaaaaaaaaaaaaaa3", created: 3, state: .queued)
        try [alices, bobs, nobodys].forEach(outbox.insert)

        XCTAssertEqual(try outbox.park(sharesNotOf: ["@bob:example.org"], at: 9), [alices.id])

        XCTAssertEqual(try outbox.share(id: alices.id)?.state, .awaitingSignIn)
        XCTAssertEqual(try outbox.share(id: alices.id)?.account, "@alice:example.org")
        XCTAssertEqual(try outbox.state(of: bobs.id), .queued)
        XCTAssertEqual(try outbox.state(of: nobodys.id), .queued)
    }

    func testTakingUpAShareAsSomeoneElseDoesNothingAndAnUnclaimedShareBecomesTheSenders() throws {
        var alices = SampleShares.link(id: "01kaaaaaaaaaaaaaaaaaaaaab1", created: 1, state: .queued)
        alices.account = "@alice:example.org"
        let nobodys = SampleShares.link(id: "01kaaaaaaaaaaaaaaaaaaaaab2", created: 2, state: .queued)
        try [alices, nobodys].forEach(outbox.insert)
        let steps = Composition.steps(for: nobodys.intent)

        let begun = try outbox.beginSending(
            [
                .init(id: alices.id, steps: steps, bytesTotal: 0),
                .init(id: nobodys.id, steps: steps, bytesTotal: 0),
            ],
            as: "@bob:example.org", signIns: ["@bob:example.org": 4], at: 5)

        XCTAssertEqual(begun.map(\.id), [nobodys.id])
        XCTAssertEqual(begun.first?.account, "@bob:example.org")
        XCTAssertEqual(begun.first?.deliveries.map(\.signIn), [4], "the sign-in the requests go out under")
        XCTAssertEqual(try outbox.share(id: alices.id)?.deliveries, [])
        XCTAssertEqual(try outbox.state(of: alices.id), .queued)
    }

    func testResumingASharePutsItUnderTheOneWhoSignedInUnlessItIsSomeoneElses() throws {
        var alices = SampleShares.link(id: "01kaaaaaaaaaaaaaaaaaaaaac1", created: 1, state: .awaitingSignIn)
        alices.account = "@alice:example.org"
        let nobodys = SampleShares.link(id: "01kaaaaaaaaaaaaaaaaaaaaac2", created: 2, state: .awaitingSignIn)
        try [alices, nobodys].forEach(outbox.insert)

        XCTAssertNil(
            try outbox.update(
                id: alices.id, state: .queued, at: 3, from: [.awaitingSignIn], account: "@bob:example.org"))
        XCTAssertEqual(
            try outbox.update(
                id: nobodys.id, state: .queued, at: 3, from: [.awaitingSignIn],
                account: "@bob:example.org")?.account, "@bob:example.org")
        XCTAssertEqual(try outbox.state(of: alices.id), .awaitingSignIn)
    }

    func testEachNewSignInIsNumberedAfterTheLast() throws {
        let account = StoredAccount(
            userID: "@a:example.org", homeserver: "https://example.org", deviceID: "D",
            signedIn: true, secretStorage: nil)
        XCTAssertEqual(try outbox.save(newSignIn: account).signIn, 1)
        XCTAssertEqual(try outbox.save(newSignIn: account).signIn, 2)
        var signedOut = try XCTUnwrap(try outbox.account())
        signedOut.signedIn = false
        try outbox.save(account: signedOut)
        XCTAssertEqual(try outbox.account()?.signIn, 2, "signing out keeps the number")
        XCTAssertEqual(try outbox.save(newSignIn: account).signIn, 3)
    }

    func testEachAccountIsKeptUnderItsUserAndTheLastSignInIsTheOneSpokenAs() throws {
        let work = StoredAccount(
            userID: "@ann:work.example", homeserver: "https://work.example", deviceID: "W", signedIn: true,
            secretStorage: "secret-service")
        let home = StoredAccount(
            userID: "@ann:home.example", homeserver: "https://home.example", deviceID: "H", signedIn: true,
            secretStorage: "file")
        XCTAssertEqual(try outbox.save(newSignIn: work).signIn, 1)
        XCTAssertEqual(try outbox.save(newSignIn: home).signIn, 2)
        XCTAssertEqual(try outbox.account()?.userID, home.userID)
        XCTAssertEqual(try outbox.accounts().map(\.userID), [home.userID, work.userID])
        XCTAssertEqual(try outbox.save(newSignIn: work).signIn, 3, "numbered after the last of any account")
        XCTAssertEqual(try outbox.account()?.userID, work.userID)
        var signedOut = try XCTUnwrap(try outbox.account(userID: home.userID))
        signedOut.signedIn = false
        try outbox.save(account: signedOut)
        XCTAssertEqual(try outbox.account(userID: home.userID)?.signedIn, false)
        XCTAssertEqual(try outbox.account(userID: work.userID)?.signedIn, true, "the other account is untouched")
        XCTAssertNil(try outbox.account(userID: "@nobody:example.org"))
    }

    func testTheOneAccountOfAnOlderFerryComesAlongWithItsSignInNumber() throws {
        let path = try olderDatabase("v6.sqlite3", upTo: "v6: sealed encryption records") { db in
            try db.execute(
                sql: """
                    INSERT INTO account (id, user_id, homeserver, device_id, signed_in, secret_storage, sign_in)
                    VALUES (1, '@me:x', 'https://x', 'D', 1, 'file', 7)
                    """)
        }

        let upgraded = try Outbox(path: path)

        let expected = StoredAccount(
            userID: "@me:x", homeserver: "https://x", deviceID: "D", signedIn: true, secretStorage: "file", signIn: 7)
        XCTAssertEqual(try upgraded.accounts(), [expected])
        XCTAssertEqual(try upgraded.save(newSignIn: expected).signIn, 8)
    }

    func testAnOlderFerrysEmptyAccountRowIsNoAccount() throws {
        let path = try olderDatabase("v6-empty.sqlite3", upTo: "v6: sealed encryption records") { db in
            try db.execute(sql: "INSERT INTO account (id, signed_in) VALUES (1, 0)")
        }

        let upgraded = try Outbox(path: path)

        XCTAssertEqual(try upgraded.accounts(), [])
        XCTAssertNil(try upgraded.account())
    }

    func testSharesAnOlderFerryHadQueuedOrBegunKeepTheAccountTheyWereGoingOutAs() throws {
        let path = try olderDatabase("older.sqlite3", upTo: "v4: suggested destinations") { db in
            try db.execute(
                sql: """
                    INSERT INTO account (id, user_id, homeserver, device_id, signed_in)
                    VALUES (1, '@me:x', 'https://x', 'D', 0)
                    """
            )
            for (id, state) in [("01kq", "queued"), ("01kw", "awaiting-sign-in"), ("01kd", "awaiting-destination")] {
                try db.execute(
                    sql: """
                        INSERT INTO share
                            (id, state, action, content_type, destinations, source, created_at, updated_at)
                        VALUES (?, ?, 'send', 'text/plain', '!r', 'share', 1, 1)
                        """, arguments: [id, state])
            }
            // A share the sender had begun before it was signed out.
            try db.execute(
                sql: """
                    INSERT INTO delivery (share_id, position, destination, state) VALUES ('01kw', 0, '!r', 'retrying')
                    """)
        }

        let upgraded = try Outbox(path: path)

        let accounts = try upgraded.database.read { db in
            try Dictionary(
                uniqueKeysWithValues: Row.fetchAll(db, sql: "SELECT id, account FROM share").map {
                    (String($0["id"]), $0["account"] as String?)
                })
        }
        XCTAssertEqual(accounts, ["01kq": "@me:x", "01kw": "@me:x", "01kd": nil])
        XCTAssertEqual(try upgraded.account()?.signIn, 0)
    }
}
