import FerryCore

/// One room as a delivery writes to it: the files it uploads for the room and the events it sends
/// there, either plain or encrypted, decided once when the channel is made
/// (`Homeserver.channel(to:serverSaysEncrypted:)`).
///
/// The sender has no other way to upload a file or send an event, so "never plain text into an
/// encrypted room" is a matter of which channel exists: a homeserver that has encrypted for a
/// room hands out that room's encrypted channel whatever the server says of it later, and one
/// that cannot encrypt hands out no channel to an encrypted room at all.
public protocol RoomChannel: Sendable {
    var roomID: String { get }
    /// Whether what goes through this channel is end-to-end encrypted.
    var isEncrypted: Bool { get }
    /// Uploads a file for this room, as the room needs it (plain, or encrypted with a fresh key
    /// kept for the event); returns its `mxc:` URI. See `Media.upload`.
    func upload(
        path: String, size: UInt64, contentType: String, filename: String, available: FileChunks.Available?,
        progress: @escaping @Sendable (UInt64) -> Void
    ) async throws(MatrixError) -> String
    /// Whether a file uploaded for another room of the same share serves this room too: a plain
    /// upload serves plain rooms, an encrypted one (whose key is kept) encrypted rooms.
    func accepts(upload uri: String) -> Bool
    /// Sends a room event under `transactionID`: the same id again returns the same event, never
    /// a second one.
    func send(_ content: MessageContent, transactionID: String) async throws(MatrixError) -> String
}

/// A room that is not end-to-end encrypted, over the client-server API: files go up as they are,
/// events as `m.room.message`.
public struct PlainRoom: RoomChannel {
    public let roomID: String
    let http: MatrixHTTP

    public init(roomID: String, http: MatrixHTTP) {
        self.roomID = roomID
        self.http = http
    }

    public var isEncrypted: Bool { false }

    public func upload(
        path: String, size: UInt64, contentType: String, filename: String,
        available: FileChunks.Available?,
        progress: @escaping @Sendable (UInt64) -> Void
    ) async throws(MatrixError) -> String {
        try await Media(http: http).upload(
            path: path, size: size, contentType: contentType, filename: filename,
            available: available, progress: progress)
    }

    public func accepts(upload uri: String) -> Bool { true }

    public func send(_ content: MessageContent, transactionID: String) async throws(MatrixError) -> String {
        try await RoomEvents(http: http).send(content, to: roomID, transactionID: transactionID)
    }
}

extension MatrixError {
    /// An encrypted room, to a homeserver that cannot encrypt: nothing is sent there.
    public static func cannotEncrypt(_ reason: String) -> MatrixError {
        MatrixError(kind: .refused, errcode: encryptionErrcode, message: reason)
    }
}
