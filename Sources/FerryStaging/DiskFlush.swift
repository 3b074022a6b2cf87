import FerryCore
import GLibAdapter
#if canImport(Glibc)
import Glibc
#endif

/// Puts a share's staged copies on disk before the share is acknowledged.
///
/// A few files are flushed one by one, with the directories that name them: syncfs would also
/// wait for everything every other program has written and not yet flushed (a picture shared
/// during a large download waited for the download, docs/PERFORMANCE.md). Many files (a folder's
/// worth) get one syncfs instead of a flush each.
enum DiskFlush {
    static let filesFlushedOneByOne = 16

    static func flush(files: [String], directories: [String]) throws(StagingError) {
        if files.count > filesFlushedOneByOne, let directory = directories.first {
            try withDescriptor(directory, flags: O_DIRECTORY) { fd in KernelCopy.syncFileSystem(of: fd) }
            return
        }
        for file in files { try withDescriptor(file, flags: 0) { fd in fdatasync(fd) } }
        // New names are only durable once their directories are flushed.
        for directory in directories { try withDescriptor(directory, flags: O_DIRECTORY) { fd in fsync(fd) } }
    }

    private static func withDescriptor(_ path: String, flags: Int32, _ body: (Int32) -> Int32) throws(StagingError) {
        let fd = open(path, O_RDONLY | O_CLOEXEC | flags)
        guard fd >= 0 else { throw .stagingFailed(path, reason: String(cString: strerror(errno))) }
        defer { close(fd) }
        if body(fd) != 0 {
            throw .stagingFailed(
                path,
                // TRANSLATORS: the reason in "{path} could not be copied for sending: {reason}."; {error} is the
                // system's reason.
                reason: tr("it could not be written to disk: {error}", ["error": String(cString: strerror(errno))]))
        }
    }
}
