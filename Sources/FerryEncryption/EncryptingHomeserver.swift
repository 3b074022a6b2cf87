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
    public func upload(path: String, size: UInt64, contentType: String, filename: String, available: FileChunks.Available?,
                       progress: @escaping @Sendable (UInt64) -> Void) async throws(MatrixError) -> String {
        try await plain.upload(path: path, size: size, contentType: contentType, filename: filename, available: available,
                               progress: progress)
    }
    public func uploadEncrypted(path: String, size: UInt64, available: FileChunks.Available?,
                                progress: @escaping @Sendable (UInt64) -> Void) async throws(MatrixError) -> String {
        // A fresh key and IV for every attempt: a retried upload is a new ciphertext, and only
        // the one the server took is kept with its key.
        let cipher = AttachmentCipher()
        // Nothing about the file leaves in the clear: no name, and a type that says only "bytes".
        let uri = try await Media(http: plain.http).upload(path: path, size: size, contentType: "application/octet-stream",
                                                           filename: nil, available: available, transform: cipher.encrypt,
                                                           progress: progress)
        guard let file = cipher.file(url: uri, size: size) else {
            // TRANSLATORS: completes "{room} is end-to-end encrypted and Ferry could not encrypt for it: {reason}. Nothing was sent there unencrypted."
            throw EncryptionFailure.crypto(tr("the file was not encrypted whole")).matrixError
        }
        do {
            try await encryption.keep(file: file, for: uri, session: session)
        } catch {
            throw error.matrixError
        }
        return uri
    }

    /// Plain events carry their transaction id, encrypted ones its tag: both are looked for.
    /// (Only after a sign-in, for deliveries begun under an earlier one.)
    public func isEncryptedUpload(_ uri: String) -> Bool { encryption.keepsFile(for: uri) }

    public func sent(in roomID: String, transactionIDs: Set<String>, since: Int64) async throws(MatrixError) -> [String: String] {
        // Whether the room was encrypted is not asked: a sign-in on a new device has just deleted
        // the old device's records (the tag key, the seal key, is the person's and stays).
        let tags: [String: String]
        do { tags = try await encryption.tags(for: transactionIDs, session: session) } catch { throw error.matrixError }
        let found = try await plain.sent(in: roomID, transactionIDs: transactionIDs.union(tags.keys), since: since)
        var byTransaction: [String: String] = [:]
        for (id, eventID) in found { byTransaction[tags[id] ?? id] = eventID }
        return byTransaction
    }

    public func send(_ content: MessageContent, to roomID: String, transactionID: String, encrypted: Bool) async throws(MatrixError) -> String {
        guard encrypted else {
            // A room Ferry has encrypted for is never sent to in the clear, whatever the server
            // says of it now (encryption cannot be switched off).
            guard !encryption.hasEncrypted(for: roomID) else {
                // TRANSLATORS: completes "{room} is end-to-end encrypted and Ferry could not encrypt for it: {reason}. Nothing was sent there unencrypted."
                throw EncryptionFailure.crypto(tr("the server says the room is no longer encrypted, which cannot be")).matrixError
            }
            return try await plain.send(content, to: roomID, transactionID: transactionID, encrypted: false)
        }
        var content = content
        if let uri = content.url {
            // An attachment: its `file` (key, IV, hash) in place of the plain URL. A URL without a
            // kept key was not uploaded encrypted, and is never sent to this room.
            let file: JSONValue?
            do { file = try await encryption.file(for: uri, session: session) } catch { throw error.matrixError }
            guard let file else {
                // TRANSLATORS: completes "{room} is end-to-end encrypted and Ferry could not encrypt for it: {reason}. Nothing was sent there unencrypted."
                throw EncryptionFailure.crypto(tr("the file was uploaded before the room was encrypted; share it again")).matrixError
            }
            content.url = nil
            content.file = file
        }
        let json: JSONValue
        do {
            json = try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(content))
        } catch {
            // TRANSLATORS: completes "{room} is end-to-end encrypted and Ferry could not encrypt for it: {reason}. Nothing was sent there unencrypted."
            throw EncryptionFailure.crypto(tr("the message could not be encoded")).matrixError
        }
        let ciphertext: JSONValue
        do {
            ciphertext = try await encryption.encrypt(json, type: "m.room.message", roomID: roomID, transactionID: transactionID,
                                                      session: session)
        } catch {
            throw error.matrixError
        }
        return try await RoomEvents(http: plain.http).send(ciphertext, type: "m.room.encrypted", to: roomID,
                                                           transactionID: transactionID)
    }
}
