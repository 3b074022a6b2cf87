import FerryCore

/// What the sender asks of a homeserver, and nothing more: rooms, media and events.
///
/// The seam under the sender. `MatrixClient` speaks it over the client-server API (MatrixHTTP);
/// the sender's unit tests speak it to an in-memory homeserver, so that the exactly-once logic
/// (same transaction ids, resume at the first step without an event, order, per-destination
/// failure) is tested in milliseconds next to the Synapse integration tests. Uploads and events go
/// through the room's `RoomChannel`, plain or encrypted, which the homeserver hands out.
public protocol Homeserver: Sendable {
    /// The rooms the user has joined.
    func joinedRooms() async throws(MatrixError) -> [String]
    /// The user's direct chats (`m.direct`): person → room ids.
    func directChats() async throws(MatrixError) -> [String: [String]]
    /// Creates a direct chat with `person`, invites them and records it in `m.direct`; `marker`
    /// goes into its creation content, to find it again (`directChat(createdWith:)`).
    func createDirectChat(with person: String, marker: String?) async throws(MatrixError) -> String
    /// Adds a room to the person's direct chats in `m.direct`, unless it is there.
    func recordDirectChat(_ roomID: String, with person: String) async throws(MatrixError)
    /// The joined room created with `marker` in its creation content, if any.
    func directChat(createdWith marker: String) async throws(MatrixError) -> String?
    /// The room an alias names.
    func resolve(alias: String) async throws(MatrixError) -> String
    /// Whether the room is end-to-end encrypted.
    func isEncrypted(_ roomID: String) async throws(MatrixError) -> Bool
    /// The largest upload the server takes, or nil when it sets none.
    func uploadLimit() async throws(MatrixError) -> UInt64?
    /// The room as a delivery writes to it (`RoomChannel`). `serverSaysEncrypted` is the sender's
    /// reading of the server (`isEncrypted`, remembered by its room policy); what the homeserver
    /// itself holds of the room wins over it: a room it has encrypted for gets its encrypted
    /// channel whatever the server says now, and a homeserver that cannot encrypt refuses an
    /// encrypted room here, before anything is uploaded for it.
    func channel(to roomID: String, serverSaysEncrypted: Bool) throws(MatrixError) -> any RoomChannel
    /// The events this user sent into the room tagged with any of `transactionIDs` (see
    /// `MessageContent.transaction`), by transaction id, looking back no further than `since`.
    func sent(
        in roomID: String, transactionIDs: Set<String>, since: Int64
    ) async throws(MatrixError) -> [String: String]
}

/// The homeserver over the client-server API, as one signed-in user, without encryption: an
/// encrypted room is refused (`EncryptingHomeserver` wraps it to send there).
public struct MatrixClient: Homeserver {
    public let http: MatrixHTTP
    let rooms: Rooms
    let userID: String

    public init(session: Session) {
        http = MatrixHTTP(session: session)
        rooms = Rooms(http: http, userID: session.userID)
        userID = session.userID
    }

    public func joinedRooms() async throws(MatrixError) -> [String] { try await rooms.joined() }
    public func directChats() async throws(MatrixError) -> [String: [String]] { try await rooms.directChats() }
    public func createDirectChat(with person: String, marker: String?) async throws(MatrixError) -> String {
        try await rooms.createDirectChat(with: person, marker: marker)
    }
    /// A new direct chat, end-to-end encrypted from its start (for a client that encrypts).
    public func createEncryptedDirectChat(with person: String, marker: String?) async throws(MatrixError) -> String {
        try await rooms.createDirectChat(with: person, marker: marker, encrypted: true)
    }
    public func recordDirectChat(_ roomID: String, with person: String) async throws(MatrixError) {
        try await rooms.recordDirectChat(roomID, with: person)
    }
    public func directChat(createdWith marker: String) async throws(MatrixError) -> String? {
        try await rooms.directChat(createdWith: marker)
    }
    public func resolve(alias: String) async throws(MatrixError) -> String { try await rooms.resolve(alias: alias) }
    public func isEncrypted(_ roomID: String) async throws(MatrixError) -> Bool { try await rooms.isEncrypted(roomID) }
    public func uploadLimit() async throws(MatrixError) -> UInt64? { try await Media(http: http).uploadLimit() }
    public func channel(to roomID: String, serverSaysEncrypted: Bool) throws(MatrixError) -> any RoomChannel {
        guard !serverSaysEncrypted else {
            // TRANSLATORS: completes "{room} is end-to-end encrypted and Ferry could not encrypt for it: {reason}.
            // Nothing was sent there unencrypted."
            throw .cannotEncrypt(tr("this client cannot encrypt"))
        }
        return PlainRoom(roomID: roomID, http: http)
    }
    public func sent(
        in roomID: String, transactionIDs: Set<String>, since: Int64
    ) async throws(MatrixError) -> [String: String] {
        try await RoomEvents(http: http).sent(in: roomID, by: userID, transactionIDs: transactionIDs, since: since)
    }
}
