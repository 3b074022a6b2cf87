import FerryCore
import Foundation

/// Checks Ferry's own copy of a file before (and after a failed) upload.
enum StagedCopy {
    /// Why the staged copy at `path` cannot be sent as `size` bytes, in words for a person; nil
    /// when it can. Each completes "Ferry's copy of {name} cannot be sent: {reason}; share the file again."
    static func problem(path: String, size: UInt64) -> String? {
        var info = stat()
        // The share's folder in the spool too: a link in its place would lead the upload out of it.
        let folder = String(path[..<(path.lastIndex(of: "/") ?? path.endIndex)])
        if !folder.isEmpty, lstat(folder, &info) == 0, info.st_mode & S_IFMT != S_IFDIR {
            // TRANSLATORS: completes "Ferry's copy of {name} cannot be sent: {reason}; share the file again."
            return tr("it is no longer in a folder of Ferry's spool")
        }
        guard lstat(path, &info) == 0 else {
            // TRANSLATORS: completes "Ferry's copy of {name} cannot be sent: {reason}; share the file again."
            return errno == ENOENT ? tr("it was removed from Ferry's spool") : unreadable()
        }
        // TRANSLATORS: completes "Ferry's copy of {name} cannot be sent: {reason}; share the file again."
        guard info.st_mode & S_IFMT == S_IFREG else { return tr("it is no longer a regular file in Ferry's spool") }
        guard UInt64(max(0, info.st_size)) >= size else {
            return trn(
                // TRANSLATORS: completes "Ferry's copy of {name} cannot be sent: {reason}; share the file again.";
                // {count} and {size} are numbers of bytes, {count} the copy's and {size} the file's.
                "it is {count} byte instead of {size} (it was cut short)",
                "it is {count} bytes instead of {size} (it was cut short)",
                Int(info.st_size), ["size": String(size)])
        }
        guard access(path, R_OK) == 0 else { return unreadable() }
        return nil
    }

    /// The system's reason `errno` says, in the sentence of `problem`.
    private static func unreadable() -> String {
        // TRANSLATORS: completes "Ferry's copy of {name} cannot be sent: {reason}; share the file again."; {error} is
        // the system's reason, such as "Permission denied".
        tr("it cannot be read ({error})", ["error": String(cString: strerror(errno))])
    }
}
