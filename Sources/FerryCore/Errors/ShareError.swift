/// Every way a share can be refused or an operation on shares can fail, each with a stable
/// D-Bus error name and a sentence for a person.
///
/// Names of bad items are quoted through `SafeDisplay`, so a file named with a newline or a
/// right-to-left override cannot forge the sentence it appears in.
public enum ShareError: Error, Equatable, Sendable {
    /// A D-Bus argument or option that is not what the interface says; the sentence says which.
    case invalidArgument(String)
    /// A share with no file, text or link in it.
    case emptyShare
    /// More URIs (files and links together) than `Limits.maxItems` in one share.
    case tooManyItems(count: Int, limit: Int)
    /// A file that does not exist (at the path given).
    case fileNotFound(String)
    /// A symbolic link whose target does not exist.
    case danglingSymlink(String)
    /// Symbolic links that point at each other without end.
    case symlinkLoop(String)
    /// A folder: Ferry shares files.
    case isDirectory(String)
    /// A device, socket or pipe (`kind` says which): Ferry never reads those.
    case notRegularFile(String, kind: FileKind)
    /// A file the person's own account cannot read.
    case permissionDenied(String)
    /// A file of 0 bytes: there is nothing to send.
    case emptyFile(String)
    /// A file over `Limits.maxFileSize`; sizes in bytes.
    case fileTooLarge(String, size: UInt64, limit: UInt64)
    /// A text share whose text is empty.
    case emptyText
    /// A text, message or subject over its limit in UTF-8 bytes; `field` names which.
    case textTooLong(field: TextField, bytes: Int, limit: Int)
    /// Something given as a URI that does not parse as one.
    case invalidURI(String, reason: String)
    /// A URI whose scheme neither Ferry nor GIO can read here.
    case unsupportedScheme(String, scheme: String)
    /// A `file:` URI naming another computer's file.
    case remoteHost(String, host: String)
    /// A non-local file (GVfs, a network mount) that failed or stalled while it was read.
    case remoteReadFailed(String, reason: String)
    /// A destination that is not a room id, a room alias or a user id.
    case invalidDestination(String)
    /// A file that could not be copied into Ferry's spool (`reason` from the system).
    case stagingFailed(String, reason: String)
    /// Ferry's own database could not record a change: the change did not happen.
    case storageFailed(StoredChange, reason: String)
    /// The share's copies do not fit on the spool's disk with `reserve` left free; all in bytes.
    case notEnoughSpace(needed: UInt64, reserve: UInt64, available: UInt64)
    /// No share has this id (it never existed, or it was forgotten).
    case noSuchShare(String)
    /// A share that is already sent, failed or cancelled.
    case notCancellable(String, state: ShareState)
    /// Cancelled, but part of the share was already on its way to `destinations`; nothing more goes out.
    case tooLateToCancel(String, destinations: [String])
    /// Retry of a share that neither failed nor is still on its way.
    case notRetryable(String, state: ShareState)
    /// Destinations given to a share that does not wait for them.
    case notCompletable(String, state: ShareState)
    // Signing in.
    /// An operation that needs a Matrix account while nobody is signed in.
    case notSignedIn
    /// The homeserver refused the sign-in; the sentence is its reason, in words.
    case signInFailed(String)
    /// The homeserver did not answer, or not as a homeserver.
    case homeserverUnreachable(String, reason: String)
    /// The homeserver does not offer this way of signing in (`method`: a password, the browser).
    case unsupportedLogin(String, method: LoginMethod)
    /// A browser sign-in already waits for its redirect.
    case signInInProgress
    // Verifying this device.
    /// The text given is not a recovery key (the sentence says why: a typo, a wrong length).
    case invalidRecoveryKey(String)
    /// The recovery key (or passphrase) does not open the account's secret storage.
    case wrongRecoveryKey(passphrase: Bool)
    /// The account offers nothing to verify this device with (the sentence says what is missing).
    case cannotVerify(String)
    /// The homeserver asks for the account's password before it takes the change.
    case passwordRequired(PasswordPurpose)
    // Delivering: a permanent refusal for one destination.
    /// An end-to-end encrypted room Ferry could not encrypt for (`reason`); it never sends plain
    /// text there instead.
    case encryptedRoom(String, reason: String)
    /// The homeserver refused to send to the room (not allowed, banned, left).
    case forbidden(String, reason: String)
    /// The room does not exist, or the account is not in it.
    case roomNotFound(String)
    /// A file over the homeserver's own upload limit (`m.upload.size`); sizes in bytes.
    case fileTooLargeForServer(String, size: UInt64, limit: UInt64)
    /// Ferry's staged copy of a file vanished or changed before it was sent.
    case stagedCopyLost(String, reason: String)
    /// Any other permanent failure for one destination, with the server's reason.
    case deliveryFailed(String, reason: String)

    /// The prefix of every Ferry D-Bus error name.
    public static let namePrefix = "io.github.ferryshare.Ferry.Error."

    /// The last part of the D-Bus error name; stable, documented in the interface XML.
    public var shortName: String {
        switch self {
        case .invalidArgument: return "InvalidArgument"
        case .emptyShare: return "EmptyShare"
        case .tooManyItems: return "TooManyItems"
        case .fileNotFound: return "FileNotFound"
        case .danglingSymlink: return "DanglingSymlink"
        case .symlinkLoop: return "SymlinkLoop"
        case .isDirectory: return "IsDirectory"
        case .notRegularFile: return "NotRegularFile"
        case .permissionDenied: return "PermissionDenied"
        case .emptyFile: return "EmptyFile"
        case .fileTooLarge: return "FileTooLarge"
        case .emptyText: return "EmptyText"
        case .textTooLong: return "TextTooLong"
        case .invalidURI: return "InvalidURI"
        case .unsupportedScheme: return "UnsupportedScheme"
        case .remoteHost: return "RemoteHost"
        case .remoteReadFailed: return "RemoteReadFailed"
        case .invalidDestination: return "InvalidDestination"
        case .stagingFailed: return "StagingFailed"
        case .storageFailed: return "StorageFailed"
        case .notEnoughSpace: return "NotEnoughSpace"
        case .noSuchShare: return "NoSuchShare"
        case .notCancellable: return "NotCancellable"
        case .tooLateToCancel: return "TooLateToCancel"
        case .notRetryable: return "NotRetryable"
        case .notCompletable: return "NotCompletable"
        case .notSignedIn: return "NotSignedIn"
        case .signInFailed: return "SignInFailed"
        case .homeserverUnreachable: return "HomeserverUnreachable"
        case .unsupportedLogin: return "UnsupportedLogin"
        case .signInInProgress: return "SignInInProgress"
        case .invalidRecoveryKey: return "InvalidRecoveryKey"
        case .wrongRecoveryKey: return "WrongRecoveryKey"
        case .cannotVerify: return "CannotVerify"
        case .passwordRequired: return "PasswordRequired"
        case .encryptedRoom: return "EncryptedRoom"
        case .forbidden: return "Forbidden"
        case .roomNotFound: return "RoomNotFound"
        case .fileTooLargeForServer: return "FileTooLargeForServer"
        case .stagedCopyLost: return "StagedCopyLost"
        case .deliveryFailed: return "DeliveryFailed"
        }
    }

    /// The full D-Bus error name.
    public var name: String { Self.namePrefix + shortName }

    /// What went wrong, in a sentence that names the bad item, in the person's language.
    public var message: String {
        func q(_ text: String) -> String { SafeDisplay.quoted(text) }
        switch self {
        case .invalidArgument(let why): return why
        case .emptyShare: return tr("There is nothing to share: give files or a text.")
        case .tooManyItems(let count, let limit):
            return trn(
                // TRANSLATORS: {count} is always more than {limit}, and {limit} is at least 1.
                "{count} file is too many for one share; the limit is {limit}.",
                "{count} files are too many for one share; the limit is {limit}.", count, ["limit": String(limit)])
        case .fileNotFound(let path): return tr("{path} does not exist.", ["path": q(path)])
        case .danglingSymlink(let path):
            return tr("{path} is a symbolic link to a file that does not exist.", ["path": q(path)])
        case .symlinkLoop(let path): return tr("{path} is a loop of symbolic links.", ["path": q(path)])
        case .isDirectory(let path):
            return tr("{path} is a folder; Ferry shares files, not folders.", ["path": q(path)])
        case .notRegularFile(let path, let kind): return Self.notRegularFile(q(path), kind: kind)
        case .permissionDenied(let path): return tr("{path} cannot be read: permission denied.", ["path": q(path)])
        case .emptyFile(let path): return tr("{path} is empty (0 bytes); there is nothing to send.", ["path": q(path)])
        case .fileTooLarge(let path, let size, let limit):
            return tr(
                // TRANSLATORS: {size} and {limit} are sizes such as "5 GB".
                "{path} is {size}, over the limit of {limit}.",
                ["path": q(path), "size": ByteCount.format(size), "limit": ByteCount.format(limit)])
        case .emptyText: return tr("The text is empty; there is nothing to share.")
        case .textTooLong(let field, let bytes, let limit):
            return Self.textTooLong(field: field, bytes: bytes, limit: limit)
        case .invalidURI(let uri, let reason):
            // TRANSLATORS: {reason} is a clause such as "it has no scheme such as file://".
            return tr("{uri} is not a URI Ferry understands: {reason}.", ["uri": q(uri), "reason": reason])
        case .unsupportedScheme(let uri, let scheme):
            // TRANSLATORS: {scheme} is a URI scheme such as "sftp", followed by its colon.
            return tr("{uri} uses {scheme}:, which Ferry cannot read here.", ["uri": q(uri), "scheme": scheme])
        case .remoteHost(let uri, let host):
            return tr(
                // TRANSLATORS: {host} is the name of the other computer.
                "{uri} names a file on another computer ({host}); Ferry shares files from this one.",
                ["uri": q(uri), "host": SafeDisplay.escaped(host)])
        case .remoteReadFailed(let uri, let reason):
            return tr("{uri} could not be read: {reason}.", ["uri": q(uri), "reason": reason])
        case .invalidDestination(let destination):
            return tr(
                // TRANSLATORS: keep the examples !…, #room:server and @user:server as they are.
                "{destination} is not a room id (!…), a room alias (#room:server) or a user id (@user:server).",
                ["destination": q(destination)])
        case .stagingFailed(let path, let reason):
            // TRANSLATORS: {reason} is the system's reason, such as "No space left on device".
            return tr("{path} could not be copied for sending: {reason}.", ["path": q(path), "reason": reason])
        case .storageFailed(let what, let reason): return Self.storageFailed(what, reason: reason)
        case .notEnoughSpace(let needed, let reserve, let available):
            return tr(
                // TRANSLATORS: {needed}, {reserve} and {available} are sizes such as "5 MB".
                "There is not enough free disk space to keep a copy of this share: it needs {needed} and {reserve} stay free for the system, but only {available} are free.",
                [
                    "needed": ByteCount.format(needed), "reserve": ByteCount.format(reserve),
                    "available": ByteCount.format(available),
                ])
        case .noSuchShare(let id): return tr("There is no share {id}.", ["id": q(id)])
        case .notCancellable(let id, let state):
            return tr(
                // TRANSLATORS: {state} is a share's state, such as "sent" (translated with the context "share state").
                "Share {id} is already {state} and cannot be cancelled.", ["id": q(id), "state": state.displayName])
        case .tooLateToCancel(let id, let destinations):
            return tr(
                // TRANSLATORS: {destinations} is a list of quoted room names or ids, separated by commas.
                "Share {id} is cancelled, but too late for {destinations}: part of it was already on its way there. Nothing more of it will be sent.",
                ["id": q(id), "destinations": destinations.map(q).joined(separator: ", ")])
        case .notRetryable(let id, let state):
            return tr(
                // TRANSLATORS: {state} is a share's state, such as "sent" (translated with the context "share state").
                "Share {id} is {state}; only a share that failed or is still on its way can be retried.",
                ["id": q(id), "state": state.displayName])
        case .notCompletable(let id, let state):
            return tr(
                // TRANSLATORS: {state} is a share's state, such as "sent" (translated with the context "share state").
                "Share {id} is {state}; only a share that waits for a destination can be completed.",
                ["id": q(id), "state": state.displayName])
        case .notSignedIn:
            // TRANSLATORS: "ferry login" is a command; keep it as it is.
            return tr("Nobody is signed in; sign in to a Matrix account first (ferry login).")
        case .signInFailed(let why): return why
        case .homeserverUnreachable(let server, let reason):
            return tr("The homeserver {server} cannot be reached: {reason}.", ["server": q(server), "reason": reason])
        case .unsupportedLogin(let server, let method): return Self.unsupportedLogin(q(server), method: method)
        case .signInInProgress: return tr("A sign-in through the browser is already waiting; finish or close it first.")
        case .invalidRecoveryKey(let why): return why
        case .wrongRecoveryKey(let passphrase):
            return passphrase
                ? tr("That passphrase does not open this account's secret storage; check it, or use the recovery key.")
                : tr("That recovery key does not open this account's secret storage; it may be an older one.")
        case .cannotVerify(let why):
            // TRANSLATORS: {reason} is a clause saying what is missing, such as "the account has no cross-signing
            // identity yet".
            return tr("This device cannot be verified this way: {reason}.", ["reason": why])
        case .passwordRequired(let what): return Self.passwordRequired(what)
        case .encryptedRoom(let room, let reason):
            return tr(
                "{room} is end-to-end encrypted and Ferry could not encrypt for it: {reason}. Nothing was sent there unencrypted.",
                ["room": q(room), "reason": reason])
        case .forbidden(let room, let reason):
            return tr("The homeserver refused to send to {room}: {reason}.", ["room": q(room), "reason": reason])
        case .roomNotFound(let room): return tr("{room} does not exist, or you are not in it.", ["room": q(room)])
        case .fileTooLargeForServer(let name, let size, let limit):
            return tr(
                // TRANSLATORS: {size} and {limit} are sizes such as "200 MB".
                "{name} is {size}, over the homeserver's upload limit of {limit}.",
                ["name": q(name), "size": ByteCount.format(size), "limit": ByteCount.format(limit)])
        case .stagedCopyLost(let name, let reason):
            return tr(
                "Ferry's copy of {name} cannot be sent: {reason}; share the file again.",
                ["name": q(name), "reason": reason])
        case .deliveryFailed(let room, let reason):
            return tr("Sending to {room} failed: {reason}.", ["room": q(room), "reason": reason])
        }
    }

    // The cases below carry what they are about as a value, and each value has a whole sentence
    // of its own, so a translator never has to fit a phrase into a sentence it cannot see.

    /// `path` (quoted) is a FIFO, a device or a socket.
    private static func notRegularFile(_ path: String, kind: FileKind) -> String {
        switch kind {
        case .fifo:
            return tr("{path} is a FIFO (named pipe), not a regular file; Ferry does not read those.", ["path": path])
        case .characterDevice:
            return tr("{path} is a character device, not a regular file; Ferry does not read those.", ["path": path])
        case .blockDevice:
            return tr("{path} is a block device, not a regular file; Ferry does not read those.", ["path": path])
        case .socket: return tr("{path} is a socket, not a regular file; Ferry does not read those.", ["path": path])
        case .other:
            // TRANSLATORS: said of a file of another kind than those Ferry names (a FIFO, a device, a socket); the
            // English repeats itself, a translation need not.
            return tr("{path} is not a regular file, not a regular file; Ferry does not read those.", ["path": path])
        }
    }

    /// A text over its limit.
    private static func textTooLong(field: TextField, bytes: Int, limit: Int) -> String {
        let values: KeyValuePairs = ["limit": String(limit)]
        switch field {
        case .subject:
            return trn(
                // TRANSLATORS: {count} chooses the plural form; {limit} is always a large number (1024 and more).
                "The subject is {count} byte long, over the limit of {limit} bytes.",
                "The subject is {count} bytes long, over the limit of {limit} bytes.", bytes, values)
        case .message:
            return trn(
                // TRANSLATORS: {count} chooses the plural form; {limit} is always a large number (1024 and more).
                "The message is {count} byte long, over the limit of {limit} bytes.",
                "The message is {count} bytes long, over the limit of {limit} bytes.", bytes, values)
        case .text:
            return trn(
                // TRANSLATORS: {count} chooses the plural form; {limit} is always a large number (1024 and more).
                "The text is {count} byte long, over the limit of {limit} bytes.",
                "The text is {count} bytes long, over the limit of {limit} bytes.", bytes, values)
        case .messageWithTextAsSent:
            return trn(
                // TRANSLATORS: the person's message and the text or link it goes with, counted together as they go out
                // as one Matrix message; {limit} is always a large number.
                "The message with its text or link, as sent is {count} byte long, over the limit of {limit} bytes.",
                "The message with its text or link, as sent is {count} bytes long, over the limit of {limit} bytes.",
                bytes, values)
        case .textAsSent:
            return trn(
                // TRANSLATORS: the text counted as it goes out in a Matrix message, where some characters take several
                // bytes; {limit} is always a large number.
                "The text, as sent is {count} byte long, over the limit of {limit} bytes.",
                "The text, as sent is {count} bytes long, over the limit of {limit} bytes.", bytes, values)
        }
    }

    /// Ferry's database refused a change.
    private static func storageFailed(_ change: StoredChange, reason: String) -> String {
        switch change {
        case .newShare:
            return tr(
                // TRANSLATORS: {reason} is the database's reason, such as "disk I/O error".
                "Ferry could not save the new share in its database ({reason}); nothing was changed.",
                ["reason": reason])
        case .destinations:
            return tr(
                // TRANSLATORS: {reason} is the database's reason, such as "disk I/O error".
                "Ferry could not save the share's destinations in its database ({reason}); nothing was changed.",
                ["reason": reason])
        case .retry:
            return tr(
                // TRANSLATORS: {reason} is the database's reason, such as "disk I/O error".
                "Ferry could not save the retry in its database ({reason}); nothing was changed.", ["reason": reason])
        case .cancellation:
            return tr(
                // TRANSLATORS: {reason} is the database's reason, such as "disk I/O error".
                "Ferry could not save the cancellation in its database ({reason}); nothing was changed.",
                ["reason": reason])
        case .signIn:
            return tr(
                // TRANSLATORS: {reason} is the database's reason, such as "disk I/O error".
                "Ferry could not save the sign-in in its database ({reason}); nothing was changed.", ["reason": reason])
        }
    }

    /// A homeserver (quoted) without the way of signing in asked for.
    private static func unsupportedLogin(_ server: String, method: LoginMethod) -> String {
        switch method {
        case .password: return tr("The homeserver {server} does not offer sign-in with a password.", ["server": server])
        case .browser:
            return tr(
                "The homeserver {server} does not offer sign-in with the browser (single sign-on).", ["server": server])
        }
    }

    /// The homeserver wants the password.
    private static func passwordRequired(_ purpose: PasswordPurpose) -> String {
        switch purpose {
        case .setUpCrossSigning: return tr("The homeserver asks for your password to set up cross-signing.")
        }
    }

    /// The command line's exit status for this error (sysexits.h).
    public var exitCode: Int32 { ExitStatus.forErrorName(name) }
}

/// Exit statuses of the command line, from sysexits.h.
public enum ExitStatus {
    /// Success.
    public static let ok: Int32 = 0
    /// EX_USAGE: the command line was used wrongly.
    public static let usage: Int32 = 64
    /// EX_DATAERR: the input was refused (an empty file, a bad destination, too long a text).
    public static let dataError: Int32 = 65
    /// EX_NOINPUT: a file does not exist or cannot be read.
    public static let noInput: Int32 = 66
    /// EX_UNAVAILABLE: the Ferry service is not there.
    public static let unavailable: Int32 = 69
    /// EX_SOFTWARE: a fault in Ferry itself.
    public static let software: Int32 = 70
    /// EX_IOERR: copying, storing or reading back failed (a full disk, a lost copy).
    public static let ioError: Int32 = 74
    /// EX_NOUSER: nobody is signed in, or the sign-in was refused.
    public static let noUser: Int32 = 67
    /// EX_TEMPFAIL: try again later (the homeserver is away, another service holds the state).
    public static let tempFail: Int32 = 75
    /// EX_PROTOCOL: the homeserver answered something Ferry cannot use.
    public static let protocolError: Int32 = 76
    /// EX_NOPERM: not allowed (a room that refuses, an encrypted room).
    public static let noPermission: Int32 = 77

    /// Maps a D-Bus error name (Ferry's or the bus's) to an exit status, so the command line
    /// reports a remote error the same way as a local one.
    public static func forErrorName(_ name: String) -> Int32 {
        guard name.hasPrefix(ShareError.namePrefix) else {
            return name.hasPrefix("org.freedesktop.DBus.Error.") || name.hasPrefix("org.gtk.GDBus.Error.")
                ? unavailable : software
        }
        switch name.dropFirst(ShareError.namePrefix.count) {
        case "FileNotFound", "DanglingSymlink", "PermissionDenied", "RemoteReadFailed": return noInput
        case "StagingFailed", "StorageFailed", "StagedCopyLost", "NotEnoughSpace": return ioError
        case "InvalidArgument", "EmptyShare", "TooManyItems", "IsDirectory", "NotRegularFile", "SymlinkLoop",
            "EmptyFile", "FileTooLarge", "EmptyText", "TextTooLong", "InvalidURI", "UnsupportedScheme",
            "RemoteHost", "InvalidDestination", "NoSuchShare", "NotCancellable", "TooLateToCancel", "NotRetryable",
            "NotCompletable",
            "EncryptedRoom", "FileTooLargeForServer":
            return dataError
        case "RoomNotFound": return noUser
        case "HomeserverUnreachable", "UnsupportedLogin": return unavailable
        case "SignInInProgress": return tempFail
        case "InvalidRecoveryKey", "WrongRecoveryKey": return dataError
        case "CannotVerify": return unavailable
        case "DeliveryFailed": return protocolError
        case "NotSignedIn", "SignInFailed", "Forbidden", "PasswordRequired": return noPermission
        default: return software
        }
    }
}
