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

    /// Removes a share's staged files; missing ones are fine.
    public func remove(shareID: String) {
        let directory = directory(for: shareID)
        guard let dir = opendir(directory) else { return }
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
            if name != "." && name != ".." { unlink(directory + "/" + name) }
        }
        closedir(dir)
        rmdir(directory)
    }

    /// The share ids that have a spool directory (to sweep what a crash left behind).
    public func shareIDs() -> [String] {
        guard let dir = opendir(root) else { return [] }
        defer { closedir(dir) }
        var ids: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
            if name != "." && name != ".." { ids.append(name) }
        }
        return ids
    }
}

/// Directories only this user may enter (0700), made with their parents.
public enum PrivateDirectory {
    public static func create(_ path: String) throws {
        var partial = ""
        for component in path.split(separator: "/") {
            partial += "/" + component
            if mkdir(partial, 0o700) != 0 && errno != EEXIST {
                throw StagingIOError(operation: "create \(partial)", errno: errno)
            }
        }
        // An existing directory from an older run or another tool gets tightened too.
        chmod(path, 0o700)
    }
}

/// A failed system call while staging, with the reason strerror gives.
public struct StagingIOError: Error, CustomStringConvertible {
    public let operation: String
    public let errno: Int32
    public var reason: String { String(cString: strerror(errno)) }
    public var description: String { "cannot \(operation): \(reason)" }
}
