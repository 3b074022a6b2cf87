import FerryCore
#if canImport(Glibc)
import Glibc
#endif

/// A local file being checked and read for staging. Checks never open anything that could block:
/// FIFOs and devices are recognised by `stat` and refused before any `open`.
struct LocalFile {
    let path: String
    let size: UInt64

    /// Checks the path without opening it: exists, is a regular file, readable, not empty, within the limit.
    static func check(_ path: String, limits: Limits) throws(StagingError) -> LocalFile {
        var info = stat()
        if lstat(path, &info) != 0 {
            switch errno {
            case EACCES: throw .permissionDenied(path)
            case ELOOP: throw .symlinkLoop(path)
            case ENOTDIR, ENOENT: throw .fileNotFound(path)
            default: throw .stagingFailed(path, reason: String(cString: strerror(errno)))
            }
        }
        if (info.st_mode & S_IFMT) == S_IFLNK, stat(path, &info) != 0 {
            switch errno {
            case ELOOP: throw .symlinkLoop(path)
            case ENOENT, ENOTDIR: throw .danglingSymlink(path)
            case EACCES: throw .permissionDenied(path)
            default: throw .stagingFailed(path, reason: String(cString: strerror(errno)))
            }
        }
        try checkKind(info.st_mode, path)
        if access(path, R_OK) != 0 { throw .permissionDenied(path) }
        let size = UInt64(info.st_size)
        if size == 0 { throw .emptyFile(path) }
        if size > limits.maxFileSize { throw .fileTooLarge(path, size: size, limit: limits.maxFileSize) }
        return LocalFile(path: path, size: size)
    }

    static func checkKind(_ mode: mode_t, _ path: String) throws(StagingError) {
        // Each kind is a whole translated sentence in ShareError.message (by way of StagingError).
        switch mode & S_IFMT {
        case S_IFREG: return
        case S_IFDIR: throw .isDirectory(path)
        case S_IFIFO: throw .notRegularFile(path, kind: .fifo)
        case S_IFCHR: throw .notRegularFile(path, kind: .characterDevice)
        case S_IFBLK: throw .notRegularFile(path, kind: .blockDevice)
        case S_IFSOCK: throw .notRegularFile(path, kind: .socket)
        default: throw .notRegularFile(path, kind: .other)
        }
    }

    /// Copies the file to `destination` (created 0600), cloning or using copy_file_range where the
    /// file system allows, and returns its first bytes (for content sniffing) and the size copied.
    /// `starting` is told those first bytes before the copy begins and may return a GrowingFile to
    /// keep informed: someone reads the copy while it is made.
    func copy(
        to destination: String, limits: Limits,
        starting: (_ leading: [UInt8]) -> GrowingFile? = { _ in nil }
    ) throws(StagingError) -> (leading: [UInt8], size: UInt64) {
        // O_NONBLOCK: if the path was swapped for a FIFO since `check`, open must not wait for a writer.
        let source = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
        guard source >= 0 else {
            throw errno == EACCES
                ? .permissionDenied(path) : .stagingFailed(path, reason: String(cString: strerror(errno)))
        }
        defer { close(source) }
        var info = stat()
        guard fstat(source, &info) == 0 else { throw .stagingFailed(path, reason: String(cString: strerror(errno))) }
        try Self.checkKind(info.st_mode, path)

        let target = open(destination, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard target >= 0 else { throw .stagingFailed(path, reason: String(cString: strerror(errno))) }
        defer { close(target) }
        let leading = FileCopy.leadingBytes(of: source)
        let reader = starting(leading)
        do {
            let size = try FileCopy.copy(from: source, to: target, limit: limits.maxFileSize) {
                reader?.advance(to: $0, bytes: $1)
            }
            // Emptied since it was checked: refused like any empty file.
            if size == 0 { throw FileCopyError.emptied }
            reader?.finish(size: size)
            return (leading, size)
        } catch FileCopyError.tooLarge(let size) {
            reader?.fail()
            throw .fileTooLarge(path, size: size, limit: limits.maxFileSize)
        } catch FileCopyError.emptied {
            reader?.fail()
            throw .emptyFile(path)
        } catch FileCopyError.io(let code) {
            reader?.fail()
            throw .stagingFailed(path, reason: String(cString: strerror(code)))
        } catch {
            reader?.fail()
            throw .stagingFailed(path, reason: "\(error)")
        }
    }
}
