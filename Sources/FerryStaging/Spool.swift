import FerryCore
#if canImport(Glibc)
import Glibc
#endif

/// Ferry's private copy of every accepted file: `spool/<share-id>/<position>`.
///
/// Copies live here from the moment a share is accepted until it is sent, cancelled or fails for
/// good, so the original may be deleted or edited at once without changing what is sent.
public struct Spool: Sendable {
    public let root: String

    public init(root: String) throws {
        self.root = root
        try PrivateDirectory.create(root)
    }

    public func directory(for shareID: String) -> String { root + "/" + shareID }

    public func path(for shareID: String, position: Int) -> String { directory(for: shareID) + "/\(position)" }

    /// Where a picture's thumbnail is written while it is sent: beside its copy, so it goes with
    /// the share's directory.
    public func thumbnailPath(for shareID: String, position: Int) -> String {
        path(for: shareID, position: position) + ".thumbnail"
    }

    /// Removes a share's staged files; missing ones are fine. Nothing outside the spool is ever
    /// touched: every step goes through a directory descriptor opened without following a
    /// symbolic link, and a link planted in the spool is removed itself, never what it points at.
    public func remove(shareID: String) {
        guard Self.isPlainName(shareID) else { return }
        let rootFD = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard rootFD >= 0 else { return }
        defer { close(rootFD) }
        let shareFD = openat(rootFD, shareID, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard shareFD >= 0 else {
            // Not a directory of ours (a link or a file in its place): the entry goes, its target stays.
            if errno == ELOOP || errno == ENOTDIR { unlinkat(rootFD, shareID, 0) }
            return
        }
        guard let dir = fdopendir(shareFD) else {
            close(shareFD)
            return
        }
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(cString: $0.bindMemory(to: CChar.self).baseAddress!)
            }
            // unlinkat removes a link, never its target; a directory (none of ours) is left.
            if name != "." && name != ".." { unlinkat(shareFD, name, 0) }
        }
        closedir(dir)
        unlinkat(rootFD, shareID, AT_REMOVEDIR)
    }

    /// A single path component: no slash, not "." or "..".
    static func isPlainName(_ name: String) -> Bool {
        !name.isEmpty && name != "." && name != ".." && !name.utf8.contains(UInt8(ascii: "/"))
    }

    /// The share ids that have a spool directory (to sweep what a crash left behind).
    public func shareIDs() -> [String] {
        guard let dir = opendir(root) else { return [] }
        defer { closedir(dir) }
        var ids: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(cString: $0.bindMemory(to: CChar.self).baseAddress!)
            }
            if name != "." && name != ".." { ids.append(name) }
        }
        return ids
    }
}

/// Directories only this user may enter (0700), made with their parents.
public enum PrivateDirectory {
    /// Makes `path` and its parents. The directory itself must be a real directory owned by this
    /// user, not a symbolic link (its parents may be: people move ~/.local elsewhere); one that is
    /// open to others is tightened to 0700 through its descriptor, so no link is followed.
    public static func create(_ path: String) throws {
        var partial = ""
        for component in path.split(separator: "/") {
            // String + String: appending the Substring itself goes through the standard library's
            // unspecialized append(contentsOf:), a scan of every conformance record at a cold start.
            partial += "/" + String(component)
            if mkdir(partial, 0o700) != 0 && errno != EEXIST {
                throw StagingIOError(operation: "create \(partial)", errno: errno)
            }
        }
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ELOOP || errno == ENOTDIR {
                throw StagingIOError(
                    operation: "use \(path)",
                    reason: "it is not a directory of Ferry's own but a symbolic link or a file; move it away")
            }
            throw StagingIOError(operation: "open \(path)", errno: errno)
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw StagingIOError(operation: "inspect \(path)", errno: errno) }
        guard info.st_uid == getuid() else {
            throw StagingIOError(operation: "use \(path)", reason: "it belongs to another user (uid \(info.st_uid))")
        }
        if info.st_mode & 0o7777 != 0o700, fchmod(fd, 0o700) != 0 {
            throw StagingIOError(operation: "make \(path) private", errno: errno)
        }
    }
}

/// A failed system call while staging, with the reason strerror gives.
public struct StagingIOError: Error, CustomStringConvertible {
    public let operation: String
    public let reason: String

    public init(operation: String, errno: Int32) {
        self.init(operation: operation, reason: String(cString: strerror(errno)))
    }

    public init(operation: String, reason: String) {
        self.operation = operation
        self.reason = reason
    }

    public var description: String { "cannot \(operation): \(reason)" }
}
