import FerryCore
import FerryCrypto
import FerryOutbox
import Foundation
import Testing
@testable import FerryEncryption

/// The sealed records, in a real outbox file and in memory alike: what is written opens again
/// under its own name and key only, and several changes are one write.
@Suite struct CryptoStoreTests {
    enum Backend: CaseIterable { case outbox, memory }

    let directory: String
    let outbox: Outbox

    init() throws {
        directory =
            FileManager.default.temporaryDirectory.appendingPathComponent("ferry-crypto-store-\(UUID().uuidString)")
            .path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        outbox = try Outbox(path: directory + "/ferry.sqlite3")
    }

    func records(_ backend: Backend) -> any CryptoRecordStore {
        switch backend {
        case .outbox: return outbox.cryptoRecords(of: "@me:test")
        case .memory: return InMemoryCryptoRecords()
        }
    }

    @Test(arguments: Backend.allCases) func aRecordOpensAgainAndIsDeletedWithTheOthers(_ backend: Backend) throws {
        let records = records(backend)
        let store = CryptoStore(records: records, seal: StateSeal(), clock: { 1_000 })
        let room = RoomRecord(
            session: OutboundGroupSession().state, created: 7, messages: 2, sharedWith: ["@a:x": ["A": "key"]])
        try store.write([
            CryptoStore.set("room:!r", room), CryptoStore.set("event:t1", JSONValue.object(["ciphertext": "x"])),
        ])
        let back = try #require(try store.load("room:!r", as: RoomRecord.self))
        #expect(back.session == room.session && back.messages == 2 && back.sharedWith == room.sharedWith)
        #expect(try store.load("event:t1", as: JSONValue.self) == ["ciphertext": "x"])
        #expect(try store.load("room:!other", as: RoomRecord.self) == nil)
        #expect(try records.hasCryptoRecord("room:!r") && !records.hasCryptoRecord("room:!other"))
        try store.write([CryptoStore.delete("event:t1")])
        #expect(try store.load("event:t1", as: JSONValue.self) == nil)
        try records.deleteCryptoRecords()
        #expect(try records.hasCryptoRecords() == false)
    }

    @Test(arguments: Backend.allCases) func aRecordCopiedOverAnotherDoesNotOpen(_ backend: Backend) throws {
        let records = records(backend)
        let store = CryptoStore(records: records, seal: StateSeal(), clock: { 1_000 })
        // An old session state written over the new one (a database edited behind Ferry's back)
        // would make Ferry reuse message indexes: it must not open.
        try store.write([
            CryptoStore.set("room:!a", JSONValue.string("a")), CryptoStore.set("room:!b", JSONValue.string("b")),
        ])
        let sealedA = try #require(try records.cryptoRecord("room:!a"))
        try records.writeCryptoRecords([.init(name: "room:!b", sealed: sealedA)], at: 2)
        #expect(throws: EncryptionFailure.self) { try store.load("room:!b", as: JSONValue.self) }
        // Nor does anything under another key.
        let other = CryptoStore(records: records, seal: StateSeal(), clock: { 1 })
        #expect(throws: EncryptionFailure.self) { try other.load("room:!a", as: JSONValue.self) }
    }

    @Test(arguments: Backend.allCases) func oldEventsAndFileKeysAreDroppedAndTheRestKept(_ backend: Backend) throws {
        let records = records(backend)
        let seal = StateSeal()
        let early = CryptoStore(records: records, seal: seal, clock: { 0 })
        try early.write([
            CryptoStore.set("event:old", JSONValue.null), CryptoStore.set("file:mxc://x/old", JSONValue.null),
            CryptoStore.set("room:!kept", JSONValue.null),
        ])
        let late = CryptoStore(records: records, seal: seal, clock: { 10_000 })
        try late.write([CryptoStore.set("event:new", JSONValue.null)])
        try late.dropEvents(olderThan: 5_000)
        #expect(try records.cryptoRecord("event:old") == nil && records.cryptoRecord("file:mxc://x/old") == nil)
        #expect(try records.cryptoRecord("event:new") != nil && records.cryptoRecord("room:!kept") != nil)
    }
}

/// An attachment encrypted as an upload streams it reads back whole with its key, and gives no
/// `file` object for a file that was not read to its end.
@Suite struct AttachmentCipherTests {
    @Test func chunksEncryptedInTurnDecryptWithTheFilesKey() throws {
        let plain = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let cipher = AttachmentCipher()
        var ciphertext: [UInt8] = []
        // Chunks as uploads read them (512 KiB would be one here; 48 KiB makes several, each
        // more than one 64 KiB slice only at the end).
        for start in stride(from: 0, to: plain.count, by: 48 * 1024) {
            var chunk = Array(plain[start..<min(start + 48 * 1024, plain.count)])
            try chunk.withUnsafeMutableBytes { try cipher.encrypt($0) }
            ciphertext += chunk
        }
        #expect(cipher.file(url: "mxc://x/y", size: 100_001) == nil)
        let file = try #require(cipher.file(url: "mxc://x/y", size: 100_000))
        #expect(file["url"] == "mxc://x/y" && file["v"] == "v2")
        let key = try #require(file["key"]?["k"]?.stringValue.flatMap(Self.base64URL))
        let iv = try #require(file["iv"]?.stringValue.flatMap(UnpaddedBase64.decode))
        var reader = try AttachmentEncryptor(key: key, iv: iv)
        #expect(try reader.encrypt(ciphertext) == plain)
        #expect(ciphertext != plain)
    }

    static func base64URL(_ text: String) -> [UInt8]? {
        UnpaddedBase64.decode(text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/"))
    }
}
