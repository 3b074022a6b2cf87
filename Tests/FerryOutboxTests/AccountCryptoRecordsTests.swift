@testable import FerryOutbox
import GRDB
import XCTest

/// Each account's encryption records are its own (OutboxSchema v8): read, listed and deleted
/// only under its user id.
final class AccountCryptoRecordsTests: OutboxTestCase {
    func testOneAccountNeitherSeesNorDeletesAnothersRecords() throws {
        let work = outbox.cryptoRecords(of: "@me:work.example")
        let home = outbox.cryptoRecords(of: "@me:home.example")
        try work.writeCryptoRecords([.init(name: "account", sealed: [1]), .init(name: "room:!a", sealed: [2])], at: 5)
        try home.writeCryptoRecords([.init(name: "account", sealed: [9])], at: 6)

        XCTAssertEqual(try work.cryptoRecord("account"), [1])
        XCTAssertEqual(try home.cryptoRecord("account"), [9])
        XCTAssertFalse(try home.hasCryptoRecord("room:!a"))
        XCTAssertEqual(try work.cryptoRecords(prefix: "room:").map(\.name), ["room:!a"])
        XCTAssertEqual(try home.cryptoRecords(prefix: "room:").map(\.name), [])

        try work.deleteCryptoRecords()

        XCTAssertFalse(try work.hasCryptoRecords())
        XCTAssertEqual(try home.cryptoRecord("account"), [9], "signing one account out leaves the other's device")
        try home.writeCryptoRecords([.init(name: "account", sealed: nil)], at: 7)
        XCTAssertFalse(try home.hasCryptoRecords())
    }

    func testTheRecordsOfAnOlderFerryBecomeItsOneAccounts() throws {
        let path = try olderDatabase("v7.sqlite3", upTo: "v7: several accounts") { db in
            try db.execute(
                sql: """
                    INSERT INTO signed_account (user_id, homeserver, device_id, signed_in, sign_in)
                    VALUES ('@me:x', 'https://x', 'D', 1, 3)
                    """)
            try db.execute(sql: "INSERT INTO crypto_record (name, sealed, updated) VALUES ('account', x'0102', 11)")
            try db.execute(sql: "INSERT INTO crypto_record (name, sealed, updated) VALUES ('olm:abc', x'03', 12)")
        }

        let upgraded = try Outbox(path: path)

        let mine = upgraded.cryptoRecords(of: "@me:x")
        XCTAssertEqual(try mine.cryptoRecord("account"), [1, 2])
        XCTAssertEqual(try mine.cryptoRecords(prefix: "olm:").map(\.updated), [12])
        XCTAssertFalse(try upgraded.cryptoRecords(of: "@other:x").hasCryptoRecords())
    }

    func testRecordsAnOlderFerryKeptWithoutAnAccountGo() throws {
        let path = try olderDatabase("v7-orphans.sqlite3", upTo: "v7: several accounts") { db in
            try db.execute(sql: "INSERT INTO crypto_record (name, sealed, updated) VALUES ('account', x'01', 1)")
        }

        let upgraded = try Outbox(path: path)

        let left = try upgraded.reading { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM account_crypto_record")
        }
        XCTAssertEqual(left, 0)
    }
}
