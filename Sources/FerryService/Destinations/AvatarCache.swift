import FerryAccount
import FerryCore
import FerryMatrix
import FerryStaging
import Foundation
import Logging

/// People's and rooms' pictures for the share dialog and the main window (`GetAvatar`): fetched
/// through authenticated media as the account that knows them, kept in `$XDG_CACHE_HOME/ferry/avatars`,
/// and answered as a file the UI loads. An `mxc:` URI never changes what it names, so a picture
/// fetched once is never asked for again, whichever account asks (all see the same media).
public actor AvatarCache {
    private let accounts: Accounts
    private let directory: String
    private let logger: Logger
    private let clock: @Sendable () -> Int64
    /// Fetches under way, by file: a dialog of many rows asks once for each picture.
    private var fetching: [String: Task<String, Error>] = [:]
    /// Each account's own picture from its profile, and until when that answer is taken as known.
    private var profiles: [String: (uri: MediaURI?, until: Int64)] = [:]

    public init(
        accounts: Accounts, cacheDirectory: String, logger: Logger, clock: @escaping @Sendable () -> Int64
    ) {
        self.accounts = accounts
        self.directory = cacheDirectory + "/avatars"
        self.logger = logger
        self.clock = clock
    }

    /// The file of the picture `uri` names at `size` × `size` (nil `uri`: the account's own, from
    /// its profile), fetched as `userID`; "" when there is none (no picture set, or the server has
    /// none to give: gone, refused, or not a picture).
    public func path(of uri: MediaURI?, size: Int, as userID: String) async throws(ShareError) -> String {
        guard let session = accounts.account(userID)?.current else { throw .notSignedIn }
        let http = MatrixHTTP(session: session)
        let avatars = Avatars(http: http)
        var media = uri
        if media == nil { media = try await profileAvatar(of: session, through: avatars) }
        guard let media else { return "" }
        // Kept for the accounts of the server that gave it: another server's copy of the same
        // URI is that server's word, which an account elsewhere does not take.
        let server = Self.fileSafe(Destination.serverName(ofUser: userID) ?? "")
        let name = "\(server)~\(media.server)_\(media.mediaID)_\(size)"
        guard name.utf8.count <= 240 else { return "" }
        let file = "\(directory)/\(name)"
        if access(file, R_OK) == 0 { return file }
        // One fetch for each account and picture: a dialog's rows ask at once.
        let key = userID + " " + file
        if let running = fetching[key] { return try await answer(of: running, for: session) }
        let task = Task { [directory, logger] () throws -> String in
            let data: Data
            do throws(MatrixError) {
                data = try await avatars.thumbnail(of: media, size: size)
            } catch {
                guard !Self.isGone(error) else {
                    // Gone or refused: no picture, the initials stay.
                    logger.info(
                        "a picture is not available", metadata: ["uri": "\(media.text)", "reason": "\(error.message)"])
                    return ""
                }
                throw error
            }
            // The UI decodes the file: only a picture of a sensible size, whatever the server sends
            // (a small file can claim to be 16384 pixels square, a gigabyte once decoded).
            guard let shown = ImageSize.of([UInt8](data)), (1...Self.largestSide).contains(shown.width),
                (1...Self.largestSide).contains(shown.height)
            else {
                logger.info("a picture is not one, or too large", metadata: ["uri": "\(media.text)"])
                return ""
            }
            do {
                try Self.write(data, to: file, in: directory)
            } catch {
                // A cache that cannot be written shows no picture; nothing else depends on it.
                logger.warning("a picture could not be kept", metadata: ["file": "\(file)", "reason": "\(error)"])
                return ""
            }
            return file
        }
        fetching[key] = task
        defer { fetching[key] = nil }
        return try await answer(of: task, for: session)
    }

    private func answer(of task: Task<String, Error>, for session: Session) async throws(ShareError) -> String {
        do {
            return try await task.value
        } catch {
            let failure = error as? MatrixError
            if failure?.isUnknownToken == true { throw .notSignedIn }
            throw .homeserverUnreachable(session.homeserver, reason: failure?.message ?? "\(error)")
        }
    }

    /// The largest side a picture is kept with, in pixels: servers scale to their nearest size
    /// above the one asked (Synapse: 32, 96, 320, 640, 800).
    static let largestSide = 1024

    /// A server name as a file name's part: its characters where they are a host name's, "-" elsewhere.
    static func fileSafe(_ server: String) -> String {
        String(server.map { $0.isASCII && ($0.isLetter || $0.isNumber || ".-:[]".contains($0)) ? $0 : "-" })
    }

    /// Whether the server said there is no such picture for good (gone, refused, too large), not
    /// that it could not answer now or that the token is over.
    static func isGone(_ error: MatrixError) -> Bool {
        !error.isTransient && error.kind != .transport && !error.isUnknownToken
    }

    /// The account's own picture, asked of its profile at most every five minutes.
    private func profileAvatar(of session: Session, through avatars: Avatars) async throws(ShareError) -> MediaURI? {
        if let known = profiles[session.userID], known.until > clock() { return known.uri }
        do {
            let uri = try await avatars.profileAvatar(of: session.userID)
            profiles[session.userID] = (uri, clock() + 300_000_000)
            return uri
        } catch {
            if error.isUnknownToken { throw .notSignedIn }
            throw .homeserverUnreachable(session.homeserver, reason: error.message)
        }
    }

    /// Written whole or not at all: a copy beside it, renamed over, so that the UI never loads half
    /// a picture. The folder is the person's alone.
    private static func write(_ data: Data, to file: String, in directory: String) throws {
        try PrivateDirectory.create(directory)
        let partial = file + ".part-\(getpid())"
        guard FileManager.default.createFile(atPath: partial, contents: data, attributes: [.posixPermissions: 0o600])
        else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: partial]) }
        guard rename(partial, file) == 0 else {
            unlink(partial)
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: file])
        }
    }
}
