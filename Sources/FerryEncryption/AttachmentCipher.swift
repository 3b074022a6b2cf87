import FerryCore
import FerryCrypto
import NIOConcurrencyHelpers

/// One attachment's encryption as an upload streams it: FerryCrypto's AttachmentEncryptor
/// stepped chunk by chunk from the upload's reader, then its `file` object once every byte went
/// through. The lock only orders the reader's calls with the final read of the hash.
final class AttachmentCipher: Sendable {
    private let state = NIOLockedValueBox(AttachmentEncryptor())

    /// Encrypts the next chunk where it lies (FileChunks.Transform).
    @Sendable func encrypt(_ chunk: UnsafeMutableRawBufferPointer) throws {
        try state.withLockedValue { encryptor in try encryptor.encrypt(inPlace: chunk) }
    }

    /// The `file` object for the event, when all `size` bytes were encrypted; nil otherwise.
    func file(url: String, size: UInt64) -> JSONValue? {
        state.withLockedValue { encryptor in encryptor.offset == size ? encryptor.file(url: url) : nil }
    }
}
