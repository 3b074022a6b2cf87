import FerryCore

/// Why a share's files could not be taken: each case names the file (its path or URI) and what
/// was wrong with it, in values. Staging's own type; the service's contract turns it into
/// `ShareError` (its D-Bus name and sentence) where intake answers (`ShareError(_:)`).
public enum StagingError: Error, Sendable, Equatable {
    case invalidURI(String, reason: String)
    case unsupportedScheme(String, scheme: String)
    case remoteHost(String, host: String)
    case fileNotFound(String)
    case danglingSymlink(String)
    case symlinkLoop(String)
    case isDirectory(String)
    case notRegularFile(String, kind: ShareError.FileKind)
    case permissionDenied(String)
    case emptyFile(String)
    case fileTooLarge(String, size: UInt64, limit: UInt64)
    case remoteReadFailed(String, reason: String)
    /// The copy failed on Ferry's side (the system's reason): the spool, not the file.
    case stagingFailed(String, reason: String)
    case notEnoughSpace(needed: UInt64, reserve: UInt64, available: UInt64)
}

extension ShareError {
    /// The contract's error for a staging failure: the same subject and values, under the D-Bus
    /// error name and sentence clients know.
    public init(_ error: StagingError) {
        switch error {
        case .invalidURI(let uri, let reason): self = .invalidURI(uri, reason: reason)
        case .unsupportedScheme(let uri, let scheme): self = .unsupportedScheme(uri, scheme: scheme)
        case .remoteHost(let uri, let host): self = .remoteHost(uri, host: host)
        case .fileNotFound(let path): self = .fileNotFound(path)
        case .danglingSymlink(let path): self = .danglingSymlink(path)
        case .symlinkLoop(let path): self = .symlinkLoop(path)
        case .isDirectory(let path): self = .isDirectory(path)
        case .notRegularFile(let path, let kind): self = .notRegularFile(path, kind: kind)
        case .permissionDenied(let path): self = .permissionDenied(path)
        case .emptyFile(let path): self = .emptyFile(path)
        case .fileTooLarge(let path, let size, let limit): self = .fileTooLarge(path, size: size, limit: limit)
        case .remoteReadFailed(let uri, let reason): self = .remoteReadFailed(uri, reason: reason)
        case .stagingFailed(let path, let reason): self = .stagingFailed(path, reason: reason)
        case .notEnoughSpace(let needed, let reserve, let available):
            self = .notEnoughSpace(needed: needed, reserve: reserve, available: available)
        }
    }
}
