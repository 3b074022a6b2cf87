import FerryAccount
import FerryCore
import FerryMatrix

/// Whose rooms a share names, asked of the homeservers when the destination lists have not said:
/// a program that shares to a room id over D-Bus without listing first must not have its share go
/// out as an account that never joined that room.
extension ShareService {
    /// How long a share waits for the servers' answers before it goes out as the lists said (or
    /// as the account signed in last): the caller is waiting for the share's id.
    static let ownerLookupDeadline: Duration = .seconds(3)

    /// Those of `destinations` whose account must be asked of the servers before a share to them
    /// is accepted (DestinationOwners.unknown); none with one account, or when offline.
    func destinationsToLookUp(_ destinations: [String]) -> [String] {
        // Most shares name no destination (the dialog asks): nothing to read for them.
        guard online, !destinations.isEmpty else { return [] }
        return owners.unknown(destinations, among: accounts.signedIn.map(\.userID))
    }

    /// Asks every signed-in account's server which of `destinations` it has joined (a room by id
    /// or alias, a person by a direct chat it is in), and records what they say. A server that does
    /// not answer within `ownerLookupDeadline` leaves its account unknown for them.
    func lookUpOwners(of destinations: [String]) async {
        var sessions: [Session] = []
        for account in accounts.signedIn {
            await account.tokenRead()
            if let session = account.currentIfRead { sessions.append(session) }
        }
        let owners = self.owners
        await withTaskGroup(of: Bool.self) { group in
            for session in sessions {
                group.addTask {
                    owners.add(await Self.joined(among: destinations, as: session), of: session.userID)
                    return true
                }
            }
            group.addTask {
                try? await Task.sleep(for: Self.ownerLookupDeadline)
                return false
            }
            var answered = 0
            for await lookedUp in group {
                guard lookedUp else { break }
                answered += 1
                if answered == sessions.count { break }
            }
            group.cancelAll()
        }
    }

    /// Those of `destinations` that `session`'s account has joined; none when its server fails.
    private static func joined(among destinations: [String], as session: Session) async -> [String] {
        let rooms = Rooms(
            http: MatrixHTTP(session: session), userID: session.userID)
        guard let joined = try? await Set(rooms.joined()) else { return [] }
        let people = destinations.filter { Destination.kind(of: $0) == .userID }
        let direct = people.isEmpty ? [:] : (try? await rooms.directChats()) ?? [:]
        var found: [String] = []
        for destination in destinations {
            switch Destination.kind(of: destination) {
            case .roomID:
                if joined.contains(destination) { found.append(destination) }
            case .roomAlias:
                let id = try? await rooms.resolve(alias: destination)
                if let id, joined.contains(id) { found.append(destination) }
            case .userID:
                if direct[destination]?.contains(where: joined.contains) == true { found.append(destination) }
            case nil:
                break
            }
        }
        return found
    }
}
