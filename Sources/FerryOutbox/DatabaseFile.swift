#if canImport(Glibc)
import Glibc
#endif

/// Creating the database file private to the user before SQLite opens it: SQLite gives its
/// -wal and -shm files the mode of the database file, so 0600 here keeps all three private.
enum DatabaseFile {
    struct CreateError: Error, CustomStringConvertible {
        let path: String
        let code: Int32
        var description: String {
            code == ELOOP
                ? "cannot use \(path): it is a symbolic link, not a file of Ferry's own; move it away"
                : "cannot create \(path): \(String(cString: strerror(code)))"
        }
    }

    static func createPrivate(_ path: String) throws {
        // Never through a link: SQLite would follow one, and write the outbox wherever it points.
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw CreateError(path: path, code: errno) }
        fchmod(fd, 0o600)
        close(fd)
        // SQLite opens its side files by name and would follow a link left in one's place: such a
        // link is removed (its target untouched) before SQLite opens the database.
        for suffix in ["-wal", "-shm", "-journal"] {
            var info = stat()
            if lstat(path + suffix, &info) == 0, info.st_mode & S_IFMT == S_IFLNK { unlink(path + suffix) }
        }
    }
}
