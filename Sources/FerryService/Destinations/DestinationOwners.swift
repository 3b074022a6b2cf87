import FerryCore
import Synchronization

/// Which accounts can reach each destination, as their destination lists last said (joined
/// rooms by id and alias, people with a direct chat): a share that names no account goes out as
/// the one account that has all its destinations. Kept while the lists' rooms are refreshed, so
/// that a share completed in the dialog a while after it listed them still finds its account.
public final class DestinationOwners: Sendable {
    private let owners = Mutex<[String: Set<String>]>([:])

    public init() {}

    /// `userID`'s destinations as its list says them now; what it listed before is replaced.
    func record(_ entries: [DestinationEntry], of userID: String) {
        owners.withLock { owners in
            for key in owners.keys { owners[key]?.remove(userID) }
            for entry in entries {
                for name in [entry.id, entry.alias, entry.userID].compactMap({ $0 }) {
                    owners[name, default: []].insert(userID)
                }
            }
        }
    }

    /// `userID` has `names` (found by `ShareService.lookUpOwners`); what it listed stays.
    func add(_ names: [String], of userID: String) {
        owners.withLock { owners in
            for name in names { owners[name, default: []].insert(userID) }
        }
    }

    /// Those of `destinations` that no account among `signedIn` is known to have, when that
    /// matters: several accounts are signed in and none is known to have them all. A share to them
    /// would otherwise go out as the account signed in last, whether it has joined them or not.
    func unknown(_ destinations: [String], among signedIn: [String]) -> [String] {
        guard signedIn.count > 1, onlyOwner(of: destinations, among: Set(signedIn)) == nil else { return [] }
        let known = owners.withLock { $0 }
        return destinations.filter { known[$0]?.isDisjoint(with: signedIn) ?? true }
    }

    /// The account each of `destinations` goes out as, among `signedIn` (the last signed in
    /// first): the one account that has them all, when exactly one has; otherwise, for each, the
    /// account signed in last among those that have it, or the one signed in last when none
    /// has (as far as the lists said). Empty when nobody is signed in.
    func accounts(for destinations: [String], among signedIn: [String]) -> [String] {
        guard let latest = signedIn.first else { return [] }
        guard signedIn.count > 1 else { return destinations.map { _ in latest } }
        if let one = onlyOwner(of: destinations, among: Set(signedIn)) { return destinations.map { _ in one } }
        let known = owners.withLock { $0 }
        return destinations.map { destination in
            signedIn.first { known[destination]?.contains($0) == true } ?? latest
        }
    }

    /// The account among `signedIn` that has every one of `destinations`, when exactly one has.
    func onlyOwner(of destinations: [String], among signedIn: Set<String>) -> String? {
        guard !destinations.isEmpty else { return nil }
        let common = owners.withLock { owners in
            destinations.reduce(signedIn) { common, destination in common.intersection(owners[destination] ?? []) }
        }
        return common.count == 1 ? common.first : nil
    }
}
