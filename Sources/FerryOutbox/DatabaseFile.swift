#if canImport(Glibc)
import Glibc
#endif

/// Creating the database file private to the user before SQLite opens it: SQLite gives its
/// -wal and -shm files the mode of the database file, so 0600 here keeps all three private.
enum DatabaseFile {
    struct CreateError: Error, CustomStringConvertible {
        let path: String
        let code: Int32
        var description: String { "cannot create \(path): \(String(cString: strerror(code)))" }
    }

    static func createPrivate(_ path: String) throws {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw CreateError(path: path, code: errno) }
        fchmod(fd, 0o600)
        close(fd)
    }
}
