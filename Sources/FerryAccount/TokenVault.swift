import GLibAdapter
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// Where an access token is kept: the Secret Service when one answers, otherwise a file only the
/// user can read, with a warning; never in the database, logs or process arguments
/// (docs/ARCHITECTURE.md, "Rules that hold everywhere").
public struct TokenVault: Sendable {
    public enum Storage: String, Sendable { case secretService = "secret-service", file }

    let secrets = SecretService(schema: "io.github.ferryshare.Ferry.AccessToken")
    let filePath: String
    let logger: Logger

    public init(stateDirectory: String, logger: Logger) {
        filePath = stateDirectory + "/access-token"
        self.logger = logger
    }

    /// Stores the token; returns where it went.
    public func store(_ token: String, userID: String, homeserver: String) -> Storage? {
        do {
            try secrets.store(label: "Ferry: \(userID) on \(homeserver)", attributes: attributes(userID), secret: token)
            removeFile()
            return .secretService
        } catch {
            logger.warning("no Secret Service to keep the sign-in in (\(error.message)); keeping it in a file only you can read",
                           metadata: ["file": "\(filePath)"])
        }
        return writeFile(token) ? .file : nil
    }

    public func token(userID: String, storage: Storage?) -> String? {
        if storage == .file { return readFile() }
        do {
            return try secrets.lookup(attributes: attributes(userID))
        } catch {
            logger.warning("cannot read the sign-in from the Secret Service: \(error.message)")
            return nil
        }
    }

    public func remove(userID: String) {
        try? secrets.clear(attributes: attributes(userID))
        removeFile()
    }

    private func attributes(_ userID: String) -> [String: String] { ["user": userID] }

    private func writeFile(_ token: String) -> Bool {
        let temporary = filePath + ".new"
        // A new file, never through a link left in its name (O_TRUNC would empty the link's target).
        unlink(temporary)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return false }
        fchmod(fd, 0o600)
        let bytes = Array(token.utf8)
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        let synced = fsync(fd) == 0
        close(fd)
        guard written == bytes.count, synced, rename(temporary, filePath) == 0 else {
            unlink(temporary)
            return false
        }
        return true
    }

    private func readFile() -> String? {
        let fd = open(filePath, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 8192)
        let count = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        return String(decoding: bytes[0..<count], as: UTF8.self)
    }

    private func removeFile() { unlink(filePath) }
}
