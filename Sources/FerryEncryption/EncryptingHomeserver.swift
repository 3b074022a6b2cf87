import FerryCore
import FerryMatrix
import Foundation

/// The homeserver as the service's sender speaks to it: the plain client, and for an encrypted
/// room every event encrypted by `Encryption` and sent as `m.room.encrypted`. The sender decides
/// per room (it asks `isEncrypted`); this never sends an encrypted room anything in the clear.
public struct EncryptingHomeserver: Homeserver {
    let plain: MatrixClient
    let encryption: Encryption
    let session: Session

    public init(session: Session, encryption: Encryption) {
        plain = MatrixClient(session: session)
        self.encryption = encryption
        self.session = session
    }

    public var encrypts: Bool { true }

    public func joinedRooms() async throws(MatrixError) -> [String] { try await plain.joinedRooms() }
    public func directChats() async throws(MatrixError) -> [String: [String]] { try await plain.directChats() }
    public func createDirectChat(with person: String, marker: String?) async throws(MatrixError) -> String {
        try await plain.createDirectChat(with: person, marker: marker)
    }
    public func recordDirectChat(_ roomID: String, with person: String) async throws(MatrixError) {
        try await plain.recordDirectChat(roomID, with: person)
    }
    public func directChat(createdWith marker: String) async throws(MatrixError) -> String? {
        try await plain.directChat(createdWith: marker)
    }
    public func resolve(alias: String) async throws(MatrixError) -> String { try await plain.resolve(alias: alias) }
    public func isEncrypted(_ roomID: String) async throws(MatrixError) -> Bool { try await plain.isEncrypted(roomID) }
    public func uploadLimit() async throws(MatrixError) -> UInt64? { try await plain.uploadLimit() }
    public func upload(path: String, size: UInt64, contentType: String, filename: String, available: FileChunks.Available?,
                       progress: @escaping @Sendable (UInt64) -> Void) async throws(MatrixError) -> String {
        try await plain.upload(path: path, size: size, contentType: contentType, filename: filename, available: available,
                               progress: progress)
    }
    public func sent(in roomID: String, transactionIDs: Set<String>, since: Int64) async throws(MatrixError) -> [String: String] {
        try await plain.sent(in: roomID, transactionIDs: transactionIDs, since: since)
    }

    public func send(_ content: MessageContent, to roomID: String, transactionID: String, encrypted: Bool) async throws(MatrixError) -> String {
        guard encrypted else { return try await plain.send(content, to: roomID, transactionID: transactionID, encrypted: false) }
        let json: JSONValue
        do {
            json = try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(content))
        } catch {
            throw EncryptionFailure.crypto("the message could not be encoded").matrixError
        }
        let ciphertext: JSONValue
        do {
            ciphertext = try await encryption.encrypt(json, type: "m.room.message", roomID: roomID, transactionID: transactionID,
                                                      session: session)
        } catch {
            throw error.matrixError
        }
        return try await EncryptedRooms(http: plain.http).send(ciphertext, to: roomID, transactionID: transactionID)
    }
}
