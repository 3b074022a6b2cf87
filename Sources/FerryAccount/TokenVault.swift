import FerryCore
import GLibAdapter
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// Where a secret is kept: the Secret Service when one answers, otherwise a file only the user
/// can read, with a warning; never in the database, logs or process arguments
/// (docs/ARCHITECTURE.md, "Rules that hold everywhere"). Two are kept: the access token, and the
/// key that seals what end-to-end encryption keeps in the database (`encryptionKey`), each under
/// its own schema and file. Each account's secrets are its own: in the keyring under its user
/// id, in a file named after it (`filePath(for:)`).
public struct TokenVault: Sendable {
    public enum Storage: String, Sendable { case secretService = "secret-service", file }

    let secrets: SecretService
    /// The file of a single-account Ferry; its secret is the first reader's (`readFile`).
    let legacyFilePath: String
    /// What the secret is, for warnings in the log ("sign-in", "encryption key").
    let what: String
    /// The secret's name in the person's keyring (Passwords and Keys shows it), with `{user}` and
    /// `{homeserver}`; translated when the secret is stored.
    let label: StaticString
    let logger: Logger

    /// The vault of the access token.
    public init(stateDirectory: String, logger: Logger) {
        self.init(
            schema: "io.github.ferryshare.Ferry.AccessToken", filePath: stateDirectory + "/access-token",
            // TRANSLATORS: the name of Ferry's sign-in in the person's keyring (Passwords and Keys); {user} is a Matrix
            // user id.
            what: "sign-in", label: trNoop("Ferry: {user} on {homeserver}"), logger: logger)
    }

    init(schema: String, filePath: String, what: String, label: StaticString, logger: Logger) {
        secrets = SecretService(schema: schema)
        legacyFilePath = filePath
        self.what = what
        self.label = label
        self.logger = logger
    }

    /// The vault of the key that seals the encryption state, next to the token and kept the same way.
    public static func encryptionKey(stateDirectory: String, logger: Logger) -> TokenVault {
        TokenVault(
            schema: "io.github.ferryshare.Ferry.EncryptionKey", filePath: stateDirectory + "/encryption-key",
            // TRANSLATORS: the name of Ferry's encryption key in the person's keyring (Passwords and Keys); {user} is a
            // Matrix user id.
            what: "encryption key", label: trNoop("Ferry encryption key: {user} on {homeserver}"), logger: logger)
    }

    /// Stores the secret; returns where it went.
    public func store(_ token: String, userID: String, homeserver: String) -> Storage? {
        do {
            let label = Translation.text(dynamic: self.label.description, ["user": userID, "homeserver": homeserver])
            try secrets.store(label: label, attributes: attributes(userID), secret: token)
            removeFile(userID: userID)
            return .secretService
        } catch {
            logger.warning(
                "no Secret Service to keep the \(what) in (\(error.message)); keeping it in a file only you can read",
                metadata: ["file": "\(filePath(for: userID))"])
        }
        return writeFile(token, userID: userID) ? .file : nil
    }

    public func token(userID: String, storage: Storage?) -> String? {
        if storage == .file { return readFile(userID: userID) }
        do {
            return try secrets.lookup(attributes: attributes(userID))
        } catch {
            logger.warning("cannot read the \(what) from the Secret Service: \(error.message)")
            return nil
        }
    }

    /// The secret kept for `userID`, looked for in the private file and then in the Secret
    /// Service: nil when neither holds one; an error when the Secret Service could not be asked
    /// (locked, not running yet), which is not the same as "there is none".
    public func kept(userID: String) throws(GLibError) -> String? {
        if let fromFile = readFile(userID: userID) { return fromFile }
        return try secrets.lookup(attributes: attributes(userID))
    }

    public func remove(userID: String) {
        do {
            try secrets.clear(attributes: attributes(userID))
        } catch {
            // Left in the keyring, it is still the person's to remove (Passwords and Keys).
            logger.warning("cannot remove the \(what) from the Secret Service: \(error.message)")
        }
        removeFile(userID: userID)
    }

    /// The private file of `userID`'s secret: the user id's digest names it, as a user id may
    /// hold a `/` and be longer than a file name may.
    func filePath(for userID: String) -> String {
        legacyFilePath + "-" + Checksum.sha256(userID).prefix(32)
    }

    private func attributes(_ userID: String) -> [String: String] { ["user": userID] }

    func writeFile(_ token: String, userID: String) -> Bool {
        let filePath = filePath(for: userID)
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

    /// Files the secret a single-account Ferry kept in one file under `userID`, its owner: the
    /// one account that Ferry knew then. `Accounts` hands it over before a second account signs
    /// in, so that no other account can ever read it as its own.
    public func adoptSingleAccountFile(owner userID: String) {
        let filePath = filePath(for: userID)
        if access(filePath, F_OK) != 0, access(legacyFilePath, F_OK) == 0, rename(legacyFilePath, filePath) == 0 {
            logger.info("the \(what) file is now filed under its account")
        }
    }

    /// The secret in `userID`'s file. While Ferry knows one account only, the file of a
    /// single-account Ferry is that account's: it is taken over here at its first read (and
    /// `Accounts` hands it over before a second account can read).
    private func readFile(userID: String) -> String? {
        adoptSingleAccountFile(owner: userID)
        let filePath = filePath(for: userID)
        let fd = open(filePath, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 8192)
        let count = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        return String(decoding: bytes[0..<count], as: UTF8.self)
    }

    private func removeFile(userID: String) { unlink(filePath(for: userID)) }
}
