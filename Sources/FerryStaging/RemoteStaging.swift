import FerryCore
import GLibAdapter
#if canImport(Glibc)
import Glibc
#endif

/// Copies a non-local file (sftp:, smb:, … through GVfs) into the spool, with a deadline: a
/// location that stops sending bytes for `Limits.remoteStallSeconds` fails the share
/// (RemoteReadFailed) instead of holding it, and a D-Bus caller waiting for its answer, forever.
enum RemoteStaging {
    static func copy(uri: String, to destination: String, limits: Limits) throws(StagingError) -> ShareItem {
        let target = open(destination, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard target >= 0 else { throw .stagingFailed(uri, reason: String(cString: strerror(errno))) }
        defer { close(target) }
        // Filled on the reading thread while this one waits (RemoteFile runs both under its lock).
        let copied = Copied()
        let info: RemoteFile.Info
        do {
            info = try RemoteFile.read(
                uri: uri, stallLimit: limits.remoteStallSeconds, limit: limits.maxFileSize,
                inspect: { info throws(StagingError) in
                    guard info.isRegular else { throw .notRegularFile(uri, kind: .other) }
                    if info.size == 0 { throw .emptyFile(uri) }
                    if info.size > limits.maxFileSize {
                        throw .fileTooLarge(uri, size: info.size, limit: limits.maxFileSize)
                    }
                },
                sink: { chunk in
                    if copied.leading.count < FileCopy.sniffLength {
                        copied.leading += chunk.prefix(FileCopy.sniffLength - copied.leading.count)
                    }
                    var offset = 0
                    while offset < chunk.count {
                        let written = write(target, chunk.baseAddress! + offset, chunk.count - offset)
                        if written < 0 { if errno == EINTR { continue }; throw FileCopyError.io(errno) }
                        offset += written
                    }
                    copied.size += UInt64(chunk.count)
                })
        } catch let error as StagingError {
            throw error
        } catch let error as RemoteFileStalled {
            throw .remoteReadFailed(
                uri,
                reason: trn(
                    // TRANSLATORS: the reason in "{uri} could not be read: {reason}."
                    "the location stopped answering (nothing came for {count} second)",
                    "the location stopped answering (nothing came for {count} seconds)", error.seconds))
        } catch is RemoteFileTooLarge {
            throw .fileTooLarge(uri, size: copied.size, limit: limits.maxFileSize)
        } catch FileCopyError.io(let code) {
            throw .stagingFailed(uri, reason: String(cString: strerror(code)))
        } catch let error as GLibError {
            if error.isNotSupported { throw .unsupportedScheme(uri, scheme: SharePlan.uriScheme(uri) ?? "?") }
            if error.isNotFound { throw .fileNotFound(uri) }
            throw .remoteReadFailed(uri, reason: error.message)
        } catch {
            throw .remoteReadFailed(uri, reason: "\(error)")
        }
        if copied.size == 0 { throw .emptyFile(uri) }
        return ShareItem(
            kind: .file, name: info.displayName,
            contentType: ContentType.guess(name: info.displayName, leadingBytes: copied.leading),
            size: copied.size, uri: uri)
    }

    /// What the reading thread has copied so far. Only touched under RemoteFile's lock, while
    /// the caller waits, so never by two threads at once.
    private final class Copied: @unchecked Sendable {
        var leading: [UInt8] = []
        var size: UInt64 = 0
    }
}
