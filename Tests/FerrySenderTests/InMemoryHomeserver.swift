import FerryMatrix
import Foundation
import Synchronization

/// A homeserver in memory for the sender's unit tests: rooms with their events, transaction ids
/// that return the event they already made (as the spec asks of a server), and faults on demand.
/// Not a mock of the sender's expectations: it answers as a server would, and the tests read back
/// what the rooms hold.
final class InMemoryHomeserver: Homeserver {
    struct Event: Equatable {
        var eventID: String
        var transactionID: String
        var msgtype: String
        var body: String
        /// What the content carried in `io.github.ferryshare.transaction`.
        var tag: String?
        /// Whether it came through an encrypted channel (as `m.room.encrypted`).
        var encrypted = false
        /// A file's `info`.
        var info: MessageContent.Info? = nil
    }

    enum Fault {
        /// Nothing goes wrong with this request.
        case none
        /// A 500 before the server did anything.
        case serverError
        /// The server stores the event, and the answer is lost on the way back.
        case lostAnswer
        /// The request never comes back (the process is "killed" while it waits).
        case hang
        /// The server stores the event, and the answer never comes back.
        case storedThenHang
        /// The server no longer takes the token (401 M_UNKNOWN_TOKEN): its sign-in was ended.
        case unknownToken
    }

    private struct State {
        var rooms: [String: [Event]] = [:]
        var transactions: [String: String] = [:]
        var forbidden: Set<String> = []
        var sendFaults: [Fault] = []
        var sendRequests: [String] = []
        var uploads = 0
        var failUploadsAfterReading = false
        var bytesFromMemory = 0
        var uploadsBegun = 0
        var lookups = 0
        var nextID = 0
        /// Rooms the server says are encrypted.
        var encryptedRooms: Set<String> = []
        /// Rooms this homeserver has encrypted for, as Ferry's crypto records hold them.
        var encryptedFor: Set<String> = []
        var encryptedUploads: Set<String> = []
        var encryptionQuestions = 0
    }

    private let state = Mutex(State())

    /// Whether this homeserver can encrypt (the service's can; a bare client cannot).
    let encrypts: Bool

    /// What the server says of its largest upload (`m.upload.size`); nil: it says nothing.
    let largestUpload: UInt64?

    init(rooms: [String], forbidden: Set<String> = [], encrypts: Bool = false, largestUpload: UInt64? = nil) {
        self.encrypts = encrypts
        self.largestUpload = largestUpload
        state.withLock { state in
            for room in rooms { state.rooms[room] = [] }
            state.forbidden = forbidden
        }
    }

    /// Faults for the next `send` requests, in order.
    func failSends(_ faults: Fault...) { state.withLock { $0.sendFaults += faults } }

    /// What the server says of a room's encryption from now on (a lying server may say "no" again).
    func sayEncrypted(_ room: String, _ encrypted: Bool = true) {
        state.withLock { state in
            if encrypted { state.encryptedRooms.insert(room) } else { state.encryptedRooms.remove(room) }
        }
    }
    /// How often the sender asked whether a room is encrypted.
    var encryptionQuestions: Int { state.withLock { $0.encryptionQuestions } }

    func events(in room: String) -> [Event] { state.withLock { $0.rooms[room] ?? [] } }
    /// The device signed out: the server forgets the transaction ids it used (as Synapse does when
    /// it deletes a device), so only the events themselves remain.
    func forgetTransactions() { state.withLock { $0.transactions = [:] } }
    /// How often the sender looked in a room for events it sent before (`sent(in:…)`).
    var lookups: Int { state.withLock { $0.lookups } }
    /// The transaction id of every `send` request, in the order they came.
    var sendRequests: [String] { state.withLock { $0.sendRequests } }
    var uploads: Int { state.withLock { $0.uploads } }
    /// Uploads of a file still being copied fail once they took some of its bytes from the
    /// copy's memory (a connection lost half-way).
    func failUploadsAfterReading() { state.withLock { $0.failUploadsAfterReading = true } }
    /// The bytes uploads took from the copy's memory rather than the file.
    var bytesFromMemory: Int { state.withLock { $0.bytesFromMemory } }
    /// Uploads that came to the server, whatever became of them.
    var uploadsBegun: Int { state.withLock { $0.uploadsBegun } }

    func joinedRooms() async throws(MatrixError) -> [String] { state.withLock { Array($0.rooms.keys) } }
    func directChats() async throws(MatrixError) -> [String: [String]] { [:] }
    func createDirectChat(with person: String, marker: String?) async throws(MatrixError) -> String {
        throw MatrixError(kind: .http(status: 403), errcode: "M_FORBIDDEN", message: "no new rooms here")
    }
    func recordDirectChat(_ roomID: String, with person: String) async throws(MatrixError) {}
    func directChat(createdWith marker: String) async throws(MatrixError) -> String? { nil }
    func resolve(alias: String) async throws(MatrixError) -> String {
        throw MatrixError(kind: .http(status: 404), errcode: "M_NOT_FOUND", message: "no aliases here")
    }
    func isEncrypted(_ roomID: String) async throws(MatrixError) -> Bool {
        state.withLock { state in
            state.encryptionQuestions += 1
            return state.encryptedRooms.contains(roomID)
        }
    }
    func uploadLimit() async throws(MatrixError) -> UInt64? { largestUpload }

    /// As the service's homeserver decides: what it has encrypted for stays encrypted.
    func channel(to roomID: String, serverSaysEncrypted: Bool) throws(MatrixError) -> any RoomChannel {
        let encrypted = serverSaysEncrypted || state.withLock { $0.encryptedFor.contains(roomID) }
        if encrypted, !encrypts { throw .cannotEncrypt("this client cannot encrypt") }
        return Room(server: self, roomID: roomID, isEncrypted: encrypted)
    }

    /// A room's channel, writing into this server's memory.
    struct Room: RoomChannel {
        let server: InMemoryHomeserver
        let roomID: String
        let isEncrypted: Bool

        func upload(
            path: String, size: UInt64, contentType: String, filename: String, available: FileChunks.Available?,
            progress: @escaping @Sendable (UInt64) -> Void
        ) async throws(MatrixError) -> String {
            let uri = try await server.upload(path: path, size: size, available: available, progress: progress)
            if isEncrypted { server.state.withLock { _ = $0.encryptedUploads.insert(uri) } }
            return uri
        }

        func accepts(upload uri: String) -> Bool {
            server.state.withLock { $0.encryptedUploads.contains(uri) } == isEncrypted
        }

        func send(_ content: MessageContent, transactionID: String) async throws(MatrixError) -> String {
            if isEncrypted { server.state.withLock { _ = $0.encryptedFor.insert(roomID) } }
            return try await server.send(content, to: roomID, transactionID: transactionID, encrypted: isEncrypted)
        }
    }

    func upload(
        path: String, size: UInt64, available: FileChunks.Available?,
        progress: @escaping @Sendable (UInt64) -> Void
    ) async throws(MatrixError) -> String {
        let failing = state.withLock { state in
            state.uploadsBegun += 1
            return state.failUploadsAfterReading
        }
        if let available, failing {
            // Reads as FileChunks does, a chunk at a time, the window first; what the window no
            // longer holds counts as read from the file.
            var sent: UInt64 = 0
            var chunk = [UInt8](repeating: 0, count: 1 << 20)
            while sent < size {
                guard let readable = try? await available.available(after: sent) else { break }
                let wanted = Int(min(UInt64(chunk.count), readable - sent))
                let count = chunk.withUnsafeMutableBytes {
                    available.copyRecent(at: sent, into: UnsafeMutableRawBufferPointer(rebasing: $0[..<wanted]))
                }
                if count > 0 {
                    state.withLock { $0.bytesFromMemory += count }
                    throw MatrixError(kind: .transport, message: "connection reset")
                }
                sent = readable
            }
            throw MatrixError(kind: .transport, message: "connection reset")
        }
        guard let data = FileManager.default.contents(atPath: path), data.count == size else {
            throw MatrixError(kind: .transport, message: "could not read \(path)")
        }
        progress(size)
        return state.withLock { state in
            state.uploads += 1
            state.nextID += 1
            return "mxc://memory.test/\(state.nextID)"
        }
    }

    func send(
        _ content: MessageContent, to roomID: String, transactionID: String, encrypted: Bool
    ) async throws(MatrixError) -> String {
        let (outcome, fault): (Result<String, MatrixError>, Fault?) = state.withLock { state in
            state.sendRequests.append(transactionID)
            guard state.rooms[roomID] != nil else {
                return (
                    .failure(MatrixError(kind: .http(status: 404), errcode: "M_NOT_FOUND", message: "no room")), nil
                )
            }
            if state.forbidden.contains(roomID) {
                return (
                    .failure(MatrixError(kind: .http(status: 403), errcode: "M_FORBIDDEN", message: "not allowed")), nil
                )
            }
            let fault = state.sendFaults.isEmpty ? nil : state.sendFaults.removeFirst()
            if fault == .serverError {
                return (.failure(MatrixError(kind: .http(status: 500), errcode: "M_UNKNOWN", message: "oops")), fault)
            }
            if fault == .hang { return (.failure(MatrixError(kind: .transport, message: "hung")), fault) }
            if fault == .unknownToken {
                let refusal = MatrixError(kind: .http(status: 401), errcode: "M_UNKNOWN_TOKEN", message: "gone")
                return (.failure(refusal), fault)
            }
            if fault == .storedThenHang {
                state.nextID += 1
                state.rooms[roomID, default: []].append(
                    Event(
                        eventID: "$\(state.nextID)", transactionID: transactionID,
                        msgtype: content.msgtype, body: content.body, tag: content.transaction,
                        encrypted: encrypted, info: content.info))
                return (.failure(MatrixError(kind: .transport, message: "hung")), .hang)
            }
            if let existing = state.transactions[transactionID] { return (.success(existing), fault) }
            state.nextID += 1
            let eventID = "$\(state.nextID)"
            state.transactions[transactionID] = eventID
            state.rooms[roomID, default: []].append(
                Event(
                    eventID: eventID, transactionID: transactionID,
                    msgtype: content.msgtype, body: content.body, tag: content.transaction,
                    encrypted: encrypted, info: content.info))
            if fault == .lostAnswer {
                return (.failure(MatrixError(kind: .transport, message: "connection reset")), fault)
            }
            return (.success(eventID), fault)
        }
        if fault == .hang || fault == .storedThenHang {
            // Never answers (until the waiting task is cancelled): the sender waiting here is as
            // good as a killed process. A sleep, not a continuation never resumed, which the
            // runtime reports as a misuse.
            try? await Task.sleep(for: .seconds(24 * 60 * 60))
        }
        return try outcome.get()
    }

    func sent(
        in roomID: String, transactionIDs: Set<String>, since: Int64
    ) async throws(MatrixError) -> [String: String] {
        state.withLock { state in
            state.lookups += 1
            var found: [String: String] = [:]
            for event in state.rooms[roomID] ?? [] {
                if let tag = event.tag, transactionIDs.contains(tag) { found[tag] = event.eventID }
            }
            return found
        }
    }
}
