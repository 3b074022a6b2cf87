import FerryCore
import FerryMatrix
import Foundation

/// An end-to-end encrypted room as the sender writes to it: each file goes up encrypted under a
/// fresh key, and each event is encrypted by `Encryption` and sent as `m.room.encrypted`, carrying
/// its files' keys. Nothing in it can send the room anything in the clear.
struct EncryptedRoomChannel: RoomChannel {
    let roomID: String
    let http: MatrixHTTP
    let encryption: Encryption
    let session: Session

    var isEncrypted: Bool { true }

    func upload(
        path: String, size: UInt64, contentType: String, filename: String, available: FileChunks.Available?,
        progress: @escaping @Sendable (UInt64) -> Void
    ) async throws(MatrixError) -> String {
        // A fresh key and IV for every attempt: a retried upload is a new ciphertext, and only
        // the one the server took is kept with its key.
        let cipher = AttachmentCipher()
        // Nothing about the file leaves in the clear: no name, and a type that says only "bytes".
        let uri = try await Media(http: http).upload(
            path: path, size: size, contentType: "application/octet-stream",
            filename: nil, available: available, transform: cipher.encrypt,
            progress: progress)
        guard let file = cipher.file(url: uri, size: size) else {
            // TRANSLATORS: completes "{room} is end-to-end encrypted and Ferry could not encrypt for it: {reason}.
            // Nothing was sent there unencrypted."
            throw EncryptionFailure.crypto(tr("the file was not encrypted whole")).matrixError
        }
        do {
            try await encryption.keep(file: file, for: uri, session: session)
        } catch {
            throw error.matrixError
        }
        return uri
    }

    /// Only an upload whose key is kept can go into an encrypted event.
    func accepts(upload uri: String) -> Bool { encryption.keepsFile(for: uri) }

    func send(_ content: MessageContent, transactionID: String) async throws(MatrixError) -> String {
        var content = content
        if let uri = content.url {
            // An attachment: its `file` (key, IV, hash) in place of the plain URL. A URL without a
            // kept key was not uploaded encrypted, and is never sent to this room.
            let file: JSONValue?
            do { file = try await encryption.file(for: uri, session: session) } catch { throw error.matrixError }
            guard let file else {
                throw EncryptionFailure.crypto(
                    // TRANSLATORS: completes "{room} is end-to-end encrypted and Ferry could not encrypt for it:
                    // {reason}. Nothing was sent there unencrypted."
                    tr("the file was uploaded before the room was encrypted; share it again")
                ).matrixError
            }
            content.url = nil
            content.file = file
        }
        if let uri = content.info?.thumbnailURL {
            // The thumbnail too: uploaded encrypted through this channel, its key kept.
            let file: JSONValue?
            do { file = try await encryption.file(for: uri, session: session) } catch { throw error.matrixError }
            guard let file else {
                // TRANSLATORS: completes "{room} is end-to-end encrypted and Ferry could not encrypt for it:
                // {reason}. Nothing was sent there unencrypted."
                throw EncryptionFailure.crypto(tr("the picture's thumbnail was not encrypted")).matrixError
            }
            content.info?.thumbnailURL = nil
            content.info?.thumbnailFile = file
        }
        let json: JSONValue
        do {
            json = try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(content))
        } catch {
            // TRANSLATORS: completes "{room} is end-to-end encrypted and Ferry could not encrypt for it: {reason}.
            // Nothing was sent there unencrypted."
            throw EncryptionFailure.crypto(tr("the message could not be encoded")).matrixError
        }
        let ciphertext: JSONValue
        do {
            ciphertext = try await encryption.encrypt(
                json, type: "m.room.message", roomID: roomID, transactionID: transactionID,
                session: session)
        } catch {
            throw error.matrixError
        }
        return try await RoomEvents(http: http).send(
            ciphertext, type: "m.room.encrypted", to: roomID,
            transactionID: transactionID)
    }
}

/// A plain room, to a homeserver that encrypts for other rooms: as `PlainRoom`, except that a
/// file uploaded encrypted for another room of the share is not used here, and that a room Ferry
/// has encrypted for since this channel was made is not written to in the clear.
struct PlainRoomBesideEncryption: RoomChannel {
    let plain: PlainRoom
    let encryption: Encryption

    var roomID: String { plain.roomID }
    var isEncrypted: Bool { false }

    func upload(
        path: String, size: UInt64, contentType: String, filename: String, available: FileChunks.Available?,
        progress: @escaping @Sendable (UInt64) -> Void
    ) async throws(MatrixError) -> String {
        try refuseOnceEncrypted()
        return try await plain.upload(
            path: path, size: size, contentType: contentType, filename: filename,
            available: available, progress: progress)
    }

    func accepts(upload uri: String) -> Bool { !encryption.keepsFile(for: uri) }

    func send(_ content: MessageContent, transactionID: String) async throws(MatrixError) -> String {
        try refuseOnceEncrypted()
        return try await plain.send(content, transactionID: transactionID)
    }

    /// Encryption cannot be switched off: once Ferry has encrypted for the room, it stays so.
    private func refuseOnceEncrypted() throws(MatrixError) {
        let encryptedBefore: Bool
        do { encryptedBefore = try encryption.hasEncrypted(for: roomID) } catch { throw error.matrixError }
        guard !encryptedBefore else {
            // TRANSLATORS: completes "{room} is end-to-end encrypted and Ferry could not encrypt for it: {reason}.
            // Nothing was sent there unencrypted."
            throw EncryptionFailure.crypto(tr("the server says the room is no longer encrypted, which cannot be"))
                .matrixError
        }
    }
}
