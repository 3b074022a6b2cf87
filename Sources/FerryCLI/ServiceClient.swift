import FerryContract
import FerryCore
import GLibAdapter

/// The command line's way to the service: Share1's one client (FerryContract), with each failure
/// turned into the command's exit status and sentence.
extension Share1Client {
    /// The client on the session bus.
    static func forCommand() throws(CommandFailure) -> Share1Client {
        do {
            return try Share1Client.session()
        } catch {
            throw CommandFailure(
                status: ExitStatus.unavailable,
                message: tr("cannot reach the D-Bus session bus: {reason}", ["reason": error.message]))
        }
    }

    /// Calls the service (starting it when it is not running) and waits for the answer.
    func run<Answer>(_ call: Share1Call<Answer>) throws(CommandFailure) -> Answer {
        do {
            return try self.call(call)
        } catch {
            throw CommandFailure(busError: error)
        }
    }

    /// The user ids of the signed-in accounts, the last signed in first (never waits for a homeserver).
    func accounts() throws(CommandFailure) -> [String] {
        do {
            return try signedInAccounts()
        } catch {
            throw CommandFailure(busError: error)
        }
    }

    /// Finds the share a person means by a full id or a unique prefix of one.
    func resolve(_ idOrPrefix: String) throws(CommandFailure) -> String {
        if ShareID.isWellFormed(idOrPrefix) { return idOrPrefix }
        let lowered = idOrPrefix.lowercased()
        let matches = try run(Share1.listShares()).map(\.id).filter { $0.hasPrefix(lowered) }
        guard !lowered.isEmpty, matches.count <= 1 else {
            throw CommandFailure(
                status: ExitStatus.dataError,
                message: trn(
                    // TRANSLATORS: {prefix} is the beginning of a share id the person typed, in quotes.
                    "{prefix} matches {count} share; give more of the id.",
                    "{prefix} matches {count} shares; give more of the id.",
                    matches.count, ["prefix": SafeDisplay.quoted(idOrPrefix)]))
        }
        guard let id = matches.first else { throw CommandFailure(ShareError.noSuchShare(idOrPrefix)) }
        return id
    }
}

/// Why a command stopped: an exit status from sysexits.h and the sentence to print.
struct CommandFailure: Error {
    let status: Int32
    let message: String
    /// The D-Bus error's short name when the service refused ("PasswordRequired"), for the
    /// commands that answer one by asking the person.
    var errorName: String?

    init(status: Int32, message: String) {
        self.status = status
        self.message = message
    }

    init(_ error: ShareError) {
        self.init(status: error.exitCode, message: error.message)
    }

    init(busError error: BusError) {
        let status = ExitStatus.forErrorName(error.name)
        // Only the bus's own errors mean the service itself is away: Ferry's errors name their
        // culprit (an unreachable homeserver is not an unavailable service).
        if status == ExitStatus.unavailable, !error.name.hasPrefix(ShareError.namePrefix) {
            self.init(
                status: status, message: tr("the Ferry service is not available: {reason}", ["reason": error.message]))
        } else {
            self.init(status: status, message: error.message)
        }
        if error.name.hasPrefix(ShareError.namePrefix) {
            errorName = String(error.name.dropFirst(ShareError.namePrefix.count))
        }
    }

    static func malformedReply(_ method: String) -> CommandFailure {
        CommandFailure(
            status: ExitStatus.software,
            // TRANSLATORS: {method} is the name of a D-Bus method ("GetShare").
            message: tr("the service sent an unexpected reply to {method}", ["method": method]))
    }
}
