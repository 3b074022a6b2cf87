import FerryCore
import GLibAdapter
#if canImport(Glibc)
import Glibc
#endif

/// Copies a non-local file (sftp:, smb:, … through GVfs) into the spool.
enum RemoteStaging {
    static func copy(uri: String, to destination: String, limits: Limits) throws(ShareError) -> ShareItem {
        let file: RemoteFile
        do { file = try RemoteFile(uri: uri) } catch let error as GLibError {
            if error.isNotSupported { throw .unsupportedScheme(uri, scheme: SharePlan.uriScheme(uri) ?? "?") }
            if error.isNotFound { throw .fileNotFound(uri) }
            throw .remoteReadFailed(uri, reason: error.message)
        } catch { throw .remoteReadFailed(uri, reason: "\(error)") }
        guard file.isRegular else { throw .notRegularFile(uri, kind: "not a regular file") }
        if file.size == 0 { throw .emptyFile(uri) }
        if file.size > limits.maxFileSize { throw .fileTooLarge(uri, size: file.size, limit: limits.maxFileSize) }

        let target = open(destination, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard target >= 0 else { throw .stagingFailed(uri, reason: String(cString: strerror(errno))) }
        defer { close(target) }
        var leading: [UInt8] = []
        var size: UInt64 = 0
        do {
            try file.read(limit: limits.maxFileSize) { chunk in
                if leading.count < FileCopy.sniffLength { leading += chunk.prefix(FileCopy.sniffLength - leading.count) }
                var offset = 0
                while offset < chunk.count {
                    let written = write(target, chunk.baseAddress! + offset, chunk.count - offset)
                    if written < 0 { if errno == EINTR { continue }; throw FileCopyError.io(errno) }
                    offset += written
                }
                size += UInt64(chunk.count)
            }
        } catch is RemoteFileTooLarge {
            throw .fileTooLarge(uri, size: size, limit: limits.maxFileSize)
        } catch FileCopyError.io(let code) {
            throw .stagingFailed(uri, reason: String(cString: strerror(code)))
        } catch {
            throw .remoteReadFailed(uri, reason: "\(error)")
        }
        if size == 0 { throw .emptyFile(uri) }
        return ShareItem(kind: .file, name: file.displayName,
                         contentType: ContentType.guess(name: file.displayName, leadingBytes: leading),
                         size: size, uri: uri)
    }
}
