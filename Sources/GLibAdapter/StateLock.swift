#if canImport(Glibc)
import Glibc
#endif

/// The lock that makes one service the only owner of a state directory, held for the process's life.
///
/// The bus name alone does not do it: two sessions (or a second bus) can share one home, and a
/// second service would sweep the first one's spool and write to its outbox. flock(2) on a file in
/// the directory is released by the kernel when the process ends, however it ends, so a crash
/// never leaves a stale lock behind.
public final class StateLock: Sendable {
    /// The lock is held by another process, whose id the file names (0 if it could not be read).
    public struct Held: Error, Sendable {
        public let path: String
        public let ownerPID: Int32
    }

    private let fd: Int32

    /// Takes the lock at `path` (created 0600, never through a symlink) without waiting.
    public init(path: String) throws(Held) {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw Held(path: path, ownerPID: 0) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            var text = [UInt8](repeating: 0, count: 16)
            let count = read(fd, &text, 15)
            close(fd)
            throw Held(
                path: path, ownerPID: count > 0 ? Int32(String(decoding: text[..<count], as: UTF8.self)) ?? 0 : 0)
        }
        // Who holds it, for the second one's message; the lock itself is the flock, not this text.
        let pid = Array("\(getpid())".utf8)
        _ = ftruncate(fd, 0)
        _ = pwrite(fd, pid, pid.count, 0)
        self.fd = fd
    }

    deinit { close(fd) }
}
