import FerryCore
import FerryMatrix
import Foundation

/// The homeserver as the service's sender speaks to it: the plain client, whose channel to an
/// encrypted room (`EncryptedRoomChannel`) encrypts every file and event. The channel is chosen by
/// what Ferry holds first: a room it has encrypted for is never handed a plain channel, whatever
/// the server says of it now (encryption cannot be switched off).
public struct EncryptingHomeserver: Homeserver {
    let plain: MatrixClient
    let encryption: Encryption
    let session: Session

    public init(session: Session, encryption: Encryption) {
        plain = MatrixClient(session: session)
        self.encryption = encryption
        self.session = session
    }

    public func joinedRooms() async throws(MatrixError) -> [String] { try await plain.joinedRooms() }
    public func directChats() async throws(MatrixError) -> [String: [String]] { try await plain.directChats() }
    public func createDirectChat(with person: String, marker: String?) async throws(MatrixError) -> String {
        // Encrypted from the start, as Element makes direct chats.
        try await plain.createEncryptedDirectChat(with: person, marker: marker)
    }
    public func recordDirectChat(_ roomID: String, with person: String) async throws(MatrixError) {
        try await plain.recordDirectChat(roomID, with: person)
    }
    public func directChat(createdWith marker: String) async throws(MatrixError) -> String? {
        try await plain.directChat(createdWith: marker)
    }
    public func resolve(alias: String) async throws(MatrixError) -> String { try await plain.resolve(alias: alias) }
    /// Whether the room is encrypted; a room encrypted by an algorithm Ferry does not speak is
    /// refused here, before anything is uploaded for it.
    public func isEncrypted(_ roomID: String) async throws(MatrixError) -> Bool {
        guard let settings = try await EncryptedRooms(http: plain.http).settings(of: roomID) else { return false }
        guard settings.algorithm == Encryption.megolm else {
            throw EncryptionFailure.unsupportedAlgorithm(settings.algorithm).matrixError
        }
        return true
    }
    public func uploadLimit() async throws(MatrixError) -> UInt64? { try await plain.uploadLimit() }
    public func channel(to roomID: String, serverSaysEncrypted: Bool) throws(MatrixError) -> any RoomChannel {
        let encryptedBefore: Bool
        do { encryptedBefore = try encryption.hasEncrypted(for: roomID) } catch { throw error.matrixError }
        if serverSaysEncrypted || encryptedBefore {
            return EncryptedRoomChannel(roomID: roomID, http: plain.http, encryption: encryption, session: session)
        }
        return PlainRoomBesideEncryption(plain: PlainRoom(roomID: roomID, http: plain.http), encryption: encryption)
    }

    /// Plain events carry their transaction id, encrypted ones its tag: both are looked for.
    /// (Only after a sign-in, for deliveries begun under an earlier one.)
    public func sent(
        in roomID: String, transactionIDs: Set<String>, since: Int64
    ) async throws(MatrixError) -> [String: String] {
        // Whether the room was encrypted is not asked: a sign-in on a new device has just deleted
        // the old device's records (the tag key, the seal key, is the person's and stays).
        let tags: [String: String]
        do { tags = try await encryption.tags(for: transactionIDs, session: session) } catch { throw error.matrixError }
        let found = try await plain.sent(in: roomID, transactionIDs: transactionIDs.union(tags.keys), since: since)
        var byTransaction: [String: String] = [:]
        for (id, eventID) in found { byTransaction[tags[id] ?? id] = eventID }
        return byTransaction
    }
}
