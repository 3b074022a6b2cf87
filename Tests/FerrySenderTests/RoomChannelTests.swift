import FerryCore
import FerryMatrix
import FerryOutbox
import FerryStaging
import Foundation
import Testing
@testable import FerrySender

/// Each room gets its uploads and events through one channel, plain or encrypted, chosen once:
/// nothing plain reaches a room the server calls encrypted, nor a room encrypted for before,
/// whatever the server says now.
@Suite(.serialized) final class RoomChannelTests {
    private let root: URL
    private let outbox: Outbox
    private let spool: Spool

    init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-channel-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        outbox = try Outbox(path: root.appendingPathComponent("ferry.sqlite3").path)
        spool = try Spool(root: root.appendingPathComponent("spool").path)
    }

    deinit { try? FileManager.default.removeItem(at: root) }

    @Test func anEncryptedRoomGetsNothingFromAHomeserverThatCannotEncrypt() async throws {
        let server = InMemoryHomeserver(rooms: ["!secret"], encrypts: false)
        server.sayEncrypted("!secret")
        let share = try queue(message: "hush", files: [("a.txt", 10)], to: ["!secret"])

        let state = try await deliver(share, through: server, until: [.failed])

        #expect(state == .failed)
        #expect(server.events(in: "!secret").isEmpty)
        #expect(server.uploadsBegun == 0, "nothing is uploaded for a room that gets no event")
        #expect(
            try outbox.share(id: share.id)?.deliveries[0].failure?.name == ShareError.encryptedRoom("", reason: "").name
        )
    }

    @Test func anEncryptedRoomGetsItsFileAndEventsEncrypted() async throws {
        let server = InMemoryHomeserver(rooms: ["!secret"], encrypts: true)
        server.sayEncrypted("!secret")
        let share = try queue(message: "hush", files: [("a.txt", 10)], to: ["!secret"])

        #expect(try await deliver(share, through: server) == .sent)

        // One file and its message: one event, the message its caption.
        #expect(server.events(in: "!secret").map(\.body) == ["hush"])
        #expect(server.uploads == 1)
        #expect(!server.events(in: "!secret").map(\.encrypted).contains(false))
    }

    @Test func aRoomEncryptedForBeforeStaysEncryptedWhenTheServerSaysOtherwise() async throws {
        let server = InMemoryHomeserver(rooms: ["!secret"], encrypts: true)
        server.sayEncrypted("!secret")
        let first = try queue(message: "one", files: [], to: ["!secret"])
        #expect(try await deliver(first, through: server) == .sent)

        // The server now lies; a new sender (a restart) remembers nothing but the stored record.
        server.sayEncrypted("!secret", false)
        let second = try queue(message: "two", files: [("b.txt", 5)], to: ["!secret"])
        #expect(try await deliver(second, through: server) == .sent)

        #expect(server.events(in: "!secret").map(\.body) == ["one", "two"], "the file captioned \"two\"")
        #expect(!server.events(in: "!secret").map(\.encrypted).contains(false))
    }

    @Test func aPlainAndAnEncryptedRoomEachGetAnUploadOfTheirKind() async throws {
        let server = InMemoryHomeserver(rooms: ["!plain", "!secret"], encrypts: true)
        server.sayEncrypted("!secret")
        let share = try queue(message: nil, files: [("photo.png", 100)], to: ["!plain", "!secret"])

        #expect(try await deliver(share, through: server) == .sent)

        #expect(server.uploads == 2, "an encrypted upload serves no plain room, nor a plain one an encrypted room")
        #expect(server.events(in: "!plain").map(\.encrypted) == [false])
        #expect(server.events(in: "!secret").map(\.encrypted) == [true])
    }

    @Test func aPlainRoomIsAskedAboutOncePerDeliveryWhileItsAnswerIsFresh() async throws {
        let server = InMemoryHomeserver(rooms: ["!plain"])
        let share = try queue(message: "several", files: [("a.txt", 1), ("b.txt", 1)], to: ["!plain"])

        #expect(try await deliver(share, through: server) == .sent)

        #expect(server.events(in: "!plain").count == 3)
        #expect(server.encryptionQuestions == 1)
    }

    // MARK: -

    private func queue(
        message: String?, files: [(name: String, size: UInt64)], to destinations: [String]
    ) throws
        -> Share
    {
        let id = "01kchannel" + String(UUID().uuidString.lowercased().filter(\.isLetter).prefix(16))
        var items: [ShareItem] = []
        for (position, file) in files.enumerated() {
            try FileManager.default.createDirectory(atPath: spool.directory(for: id), withIntermediateDirectories: true)
            let type = file.name.hasSuffix(".png") ? "image/png" : "text/plain"
            items.append(
                ShareItem(
                    kind: .file, name: file.name, contentType: type, size: file.size, uri: "file:///tmp/\(file.name)"))
            #expect(
                FileManager.default.createFile(
                    atPath: spool.path(for: id, position: position), contents: Data(count: Int(file.size))))
        }
        if files.isEmpty { items.append(.text(message ?? "")) }
        let intent = ShareIntent(
            items: items, subject: nil, message: files.isEmpty ? nil : message,
            destinations: destinations, source: .cli)
        let share = Share(id: id, intent: intent, state: .queued, created: 1, updated: 1)
        try outbox.insert(share)
        return share
    }

    /// Runs a sender until the share reaches one of `states` (or five seconds pass); its state then.
    private func deliver(
        _ share: Share, through server: InMemoryHomeserver,
        until states: Set<ShareState> = [.sent, .failed]
    ) async throws -> ShareState? {
        let sender = Sender.inMemory(outbox: outbox, spool: spool, server: server)
        sender.start()
        sender.wake()
        for _ in 0..<2_500 {
            if let state = try outbox.state(of: share.id), states.contains(state) { return state }
            try await Task.sleep(nanoseconds: 2_000_000)
        }
        return try outbox.state(of: share.id)
    }
}
