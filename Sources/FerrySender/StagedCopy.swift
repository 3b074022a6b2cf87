import Foundation

/// Checks Ferry's own copy of a file before (and after a failed) upload.
enum StagedCopy {
    /// Why the staged copy at `path` cannot be sent as `size` bytes, in words for a person; nil
    /// when it can.
    static func problem(path: String, size: UInt64) -> String? {
        var info = stat()
        // The share's folder in the spool too: a link in its place would lead the upload out of it.
        let folder = String(path[..<(path.lastIndex(of: "/") ?? path.endIndex)])
        if !folder.isEmpty, lstat(folder, &info) == 0, info.st_mode & S_IFMT != S_IFDIR {
            return "it is no longer in a folder of Ferry's spool"
        }
        guard lstat(path, &info) == 0 else {
            return errno == ENOENT ? "it was removed from Ferry's spool" : "it cannot be read (\(String(cString: strerror(errno))))"
        }
        guard info.st_mode & S_IFMT == S_IFREG else { return "it is no longer a regular file in Ferry's spool" }
        guard UInt64(max(0, info.st_size)) >= size else {
            return "it is \(info.st_size) bytes instead of \(size) (it was cut short)"
        }
        guard access(path, R_OK) == 0 else { return "it cannot be read (\(String(cString: strerror(errno))))" }
        return nil
    }
}
