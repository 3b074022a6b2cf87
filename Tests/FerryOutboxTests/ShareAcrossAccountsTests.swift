@testable import FerryOutbox
import FerryCore
import GRDB
import XCTest

/// One share to the rooms of several accounts: each destination keeps its account, each
/// delivery begins under its own account's sign-in, each upload serves its own account's
/// deliveries, and the share waits only once none of its accounts is signed in.
final class ShareAcrossAccountsTests: OutboxTestCase {
    let work = "@me:work.example", home = "@me:home.example"

    func testEachDestinationKeepsItsAccountAndADeliveryBeginsUnderItsOwnSignIn() throws {
        let share = try queued(id: "01kacrossaaaaaaaaaaaaaaaa1", to: ["!w", "!h", "!w2"], as: [work, home, work])

        let read = try XCTUnwrap(try outbox.share(id: share.id))
        XCTAssertEqual(read.account, work)
        XCTAssertEqual(read.destinationAccounts, [work, home, work])
        XCTAssertEqual(read.accounts, [work, home])
        let begun = try XCTUnwrap(
            try outbox.beginSending(
                id: share.id, steps: Composition.steps(for: share.intent), bytesTotal: 0, as: home,
                signIns: [work: 3, home: 4], at: 5))
        XCTAssertEqual(begun.deliveries.map(\.signIn), [3, 4, 3])
        XCTAssertEqual(begun.account, work, "taken up by another of its accounts, the share stays its first's")
        XCTAssertNil(
            try outbox.beginSending(
                id: share.id, steps: [], bytesTotal: 0, as: "@other:example.org", signIns: [:], at: 6),
            "never taken up as an account it does not go out as")
    }

    func testAShareWaitsForTheAccountWhoseDeliveriesAreLeft() throws {
        let share = try queued(id: "01kacrossaaaaaaaaaaaaaaaa7", to: ["!w", "!h"], as: [work, home])
        var begun = try XCTUnwrap(
            try outbox.beginSending(
                id: share.id, steps: Composition.steps(for: share.intent), bytesTotal: 0, as: work,
                signIns: [work: 1], at: 2))
        XCTAssertEqual(begun.accountsStillSending, [work, home])

        begun.deliveries[0].state = .sent
        XCTAssertEqual(begun.accountsStillSending, [home])
        XCTAssertEqual(begun.awaitedAccount, home, "the account whose delivery is left, not the share's first")

        begun.deliveries[1].state = .failed
        XCTAssertEqual(begun.accountsStillSending, [], "nothing left: resumed by any sign-in, and settled")
        XCTAssertEqual(begun.awaitedAccount, work)
    }

    func testOneAccountAlonePerDestinationIsKeptAsTheSharesAccount() {
        XCTAssertEqual(Share.destinationAccounts([work, work]).account, work)
        XCTAssertEqual(Share.destinationAccounts([work, work]).perDestination, [])
        XCTAssertEqual(Share.destinationAccounts([work, home]).perDestination, [work, home])
        XCTAssertNil(Share.destinationAccounts([]).account)
    }

    func testAShareOfSeveralAccountsWaitsOnlyOnceNoneOfThemIsSignedIn() throws {
        let both = try queued(id: "01kacrossaaaaaaaaaaaaaaaa2", to: ["!w", "!h"], as: [work, home])
        let worksAlone = try queued(id: "01kacrossaaaaaaaaaaaaaaaa3", to: ["!w"], as: [work])

        XCTAssertEqual(try outbox.park(sharesNotOf: [home], at: 7), [worksAlone.id])
        XCTAssertEqual(try outbox.state(of: both.id), .queued, "home is signed in: its delivery goes on")
        XCTAssertEqual(
            try outbox.move(from: [.queued], to: .awaitingSignIn, at: 8, account: home), [],
            "signing home out moves only the shares that go out as home alone")
        XCTAssertEqual(try outbox.park(sharesNotOf: [], at: 9), [both.id])
        XCTAssertEqual(try outbox.share(id: both.id)?.destinationAccounts, [work, home])
    }

    func testSigningOneAccountOutParksItsOwnSharesAndThoseNoneOfWhoseAccountsIsLeft() throws {
        let homesAlone = try queued(id: "01kacrossaaaaaaaaaaaaaaaa8", to: ["!h"], as: [home])
        let both = try queued(id: "01kacrossaaaaaaaaaaaaaaaa9", to: ["!w", "!h"], as: [work, home])

        XCTAssertEqual(try outbox.parkShares(of: home, stillSignedIn: [work], at: 3), [homesAlone.id])
        XCTAssertEqual(try outbox.state(of: both.id), .queued, "work is still signed in")
        XCTAssertEqual(try outbox.parkShares(of: work, stillSignedIn: [], at: 4), [both.id])
    }

    func testResumingAShareOfSeveralAccountsAsAnyOfThemKeepsItsAccounts() throws {
        let both = try queued(id: "01kacrossaaaaaaaaaaaaaaaa4", to: ["!w", "!h"], as: [work, home])
        _ = try outbox.update(id: both.id, state: .awaitingSignIn, at: 2)

        let resumed = try outbox.update(id: both.id, state: .sending, at: 3, from: [.awaitingSignIn], account: home)

        XCTAssertEqual(resumed?.account, work)
        XCTAssertEqual(resumed?.destinationAccounts, [work, home])
    }

    func testCompletingWithRoomsOfTwoAccountsKeepsEachRoomsAccount() throws {
        let share = SampleShares.text(id: "01kacrossaaaaaaaaaaaaaaaa5", created: 1, state: .awaitingDestination)
        try outbox.insert(share)

        let completed = try outbox.complete(
            id: share.id, destinations: ["!shared", "!shared"], message: nil, state: .queued, accounts: [work, home],
            at: 2)

        XCTAssertEqual(completed?.intent.destinations, ["!shared", "!shared"], "one room, once for each account")
        XCTAssertEqual(completed?.destinationAccounts, [work, home])
        XCTAssertEqual(completed?.account(at: 1), home)
    }

    func testAnUploadServesTheDeliveriesOfItsOwnAccountOnly() throws {
        let share = try queued(
            id: "01kacrossaaaaaaaaaaaaaaaa6", to: ["!w", "!h", "!w2"], as: [work, home, work],
            items: [ShareItem(kind: .file, name: "a.png", contentType: "image/png", size: 3, uri: nil)])
        let steps: [Composition.Step] = [.file(item: 0)]
        _ = try outbox.beginSending(id: share.id, steps: steps, bytesTotal: 3, as: work, signIns: [work: 1], at: 2)
        let first = try XCTUnwrap(try outbox.steps(shareID: share.id, position: 0).first)

        try outbox.recordUpload(first, contentURI: "mxc://work/a", sharedWith: [0, 2])

        XCTAssertEqual(try outbox.steps(shareID: share.id, position: 2).first?.contentURI, "mxc://work/a")
        XCTAssertNil(try outbox.steps(shareID: share.id, position: 1).first?.contentURI, "home uploads its own")
    }

    func testAnOlderFerrysSharesGoOutAsTheirOneAccount() throws {
        let path = try olderDatabase("v8.sqlite3", upTo: "v8: encryption records per account") { db in
            try db.execute(
                sql: """
                    INSERT INTO share (id, state, action, content_type, destinations, source, created_at, updated_at,
                                       account)
                    VALUES ('01kold', 'queued', 'send', 'text/plain', '!a' || char(10) || '!b', 'share', 1, 1, '@me:x')
                    """)
            try db.execute(
                sql: """
                    INSERT INTO share_item (share_id, position, kind, name, content_type, size, text)
                    VALUES ('01kold', 0, 'text', 'hi', 'text/plain', 2, 'hi')
                    """)
        }

        let upgraded = try Outbox(path: path)

        let share = try XCTUnwrap(try upgraded.share(id: "01kold"))
        XCTAssertEqual(share.destinationAccounts, [])
        XCTAssertEqual([0, 1].map { share.account(at: $0) }, ["@me:x", "@me:x"])
    }

    private func queued(
        id: String, to destinations: [String], as accounts: [String], items: [ShareItem] = [.text("hi")]
    ) throws -> Share {
        let intent = ShareIntent(items: items, subject: nil, message: nil, destinations: destinations, source: .cli)
        let (account, perDestination) = Share.destinationAccounts(accounts)
        let share = Share(
            id: id, intent: intent, state: .queued, created: 1, updated: 1, account: account,
            destinationAccounts: perDestination)
        try outbox.insert(share)
        return share
    }
}
