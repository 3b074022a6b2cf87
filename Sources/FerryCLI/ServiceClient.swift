import FerryCore
import FerryIntake
import FerryService
import GLibAdapter

/// The command line's way to the service: Share1 calls on the session bus, activating the
/// service when it is not running.
struct ServiceClient {
    private let connection: BusConnection

    init() throws(CommandFailure) {
        do {
            connection = try BusConnection.session()
        } catch {
            throw CommandFailure(status: ExitStatus.unavailable,
                                 message: "cannot reach the D-Bus session bus: \((error as? BusError)?.message ?? "\(error)")")
        }
    }

    func share(_ dict: [String: Variant]) throws(CommandFailure) -> String {
        // No timeout: staging a large file takes as long as copying it.
        let reply = try call("Share", [.dictionary(dict)], timeout: Int32.max)
        guard case .string(let id)? = reply.first else { throw CommandFailure.malformedReply("Share") }
        return id
    }

    func share(id: String) throws(CommandFailure) -> Share {
        let reply = try call("GetShare", [.string(id)])
        guard case .dictionary(let dict)? = reply.first, let share = ShareCodec.decode(dict) else {
            throw CommandFailure.malformedReply("GetShare")
        }
        return share
    }

    func shares() throws(CommandFailure) -> [Share] {
        let reply = try call("ListShares", [])
        guard case .dictionaries(let list)? = reply.first else { throw CommandFailure.malformedReply("ListShares") }
        return list.compactMap(ShareCodec.decode)
    }

    func cancel(id: String) throws(CommandFailure) {
        _ = try call("Cancel", [.string(id)])
    }

    /// Finds the share a person means by a full id or a unique prefix of one.
    func resolve(_ idOrPrefix: String) throws(CommandFailure) -> String {
        if ShareID.isWellFormed(idOrPrefix) { return idOrPrefix }
        let lowered = idOrPrefix.lowercased()
        let matches = try shares().map(\.id).filter { $0.hasPrefix(lowered) }
        guard !lowered.isEmpty, matches.count <= 1 else {
            throw CommandFailure(status: ExitStatus.dataError,
                                 message: "\(SafeDisplay.quoted(idOrPrefix)) matches \(matches.count) shares; give more of the id.")
        }
        guard let id = matches.first else { throw CommandFailure(ShareError.noSuchShare(idOrPrefix)) }
        return id
    }

    func complete(id: String, destinations: [String], message: String) throws(CommandFailure) {
        _ = try call("CompleteShare", [.string(id), .strings(destinations), .string(message)])
    }

    func retry(id: String) throws(CommandFailure) {
        _ = try call("Retry", [.string(id)])
    }

    func signIn(_ credentials: [String: Variant]) throws(CommandFailure) -> [String: Variant] {
        // Signing in asks the homeserver (and, for SSO, waits for a person in a browser).
        guard case .dictionary(let account)? = try call("SignIn", [.dictionary(credentials)], timeout: 330_000).first else {
            throw CommandFailure.malformedReply("SignIn")
        }
        return account
    }

    func signOut() throws(CommandFailure) {
        _ = try call("SignOut", [], timeout: 60_000)
    }

    func status() throws(CommandFailure) -> [String: Variant] {
        guard case .dictionary(let status)? = try call("GetStatus", []).first else { throw CommandFailure.malformedReply("GetStatus") }
        return status
    }

    func destinations(query: String, limit: UInt32) throws(CommandFailure) -> [[String: Variant]] {
        guard case .dictionaries(let list)? = try call("ListDestinations", [.string(query), .uint32(limit)], timeout: 60_000).first else {
            throw CommandFailure.malformedReply("ListDestinations")
        }
        return list
    }

    /// Calls `handler` on this thread's main loop whenever the service announces a change of a share.
    func onShareChanged(_ handler: @escaping (Share) -> Void) {
        connection.subscribe(sender: FerryBus.name, interface: FerryBus.share1, member: "ShareChanged", path: FerryBus.path) {
            _, arguments in
            guard let values = arguments.tupleValue, values.count == 2, case .dictionary(let dict) = values[1],
                  let share = ShareCodec.decode(dict) else { return }
            handler(share)
        }
    }

    private func call(_ method: String, _ arguments: [Variant], timeout: Int32 = -1) throws(CommandFailure) -> [Variant] {
        do {
            let reply = try connection.call(destination: FerryBus.name, path: FerryBus.path, interface: FerryBus.share1,
                                            method: method, arguments: .tuple(arguments), timeoutMilliseconds: timeout)
            return reply.tupleValue ?? []
        } catch let error as BusError {
            throw CommandFailure(busError: error)
        } catch {
            throw CommandFailure(status: ExitStatus.software, message: "\(error)")
        }
    }
}

/// Why a command stopped: an exit status from sysexits.h and the sentence to print.
struct CommandFailure: Error {
    let status: Int32
    let message: String

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
            self.init(status: status, message: "the Ferry service is not available: \(error.message)")
        } else {
            self.init(status: status, message: error.message)
        }
    }

    static func malformedReply(_ method: String) -> CommandFailure {
        CommandFailure(status: ExitStatus.software, message: "the service sent an unexpected reply to \(method)")
    }
}
