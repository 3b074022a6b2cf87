import FerryCore
import FerryEncryption
import FerryOutbox
import FerrySender

/// What a person (or the dialog) does with a share after it was accepted: choose where it goes,
/// retry it, and see how Ferry is doing.
extension ShareService {
    /// `CompleteShare`: the dialog's destinations and message; the share is queued. `accounts`
    /// (`CompleteShareAs`): the account each destination goes out as, nil where the dialog leaves
    /// it to Ferry (the one that has it, as for a share that names none).
    public func complete(
        id: String, destinations: [String], message: String, accounts named: [String?]? = nil
    ) throws(ShareError) -> Share {
        let current = try share(id: id)
        guard current.state == .awaitingDestination else { throw .notCompletable(id, state: current.state) }
        guard !destinations.isEmpty else { throw .invalidArgument(tr("Choose at least one destination.")) }
        for destination in destinations where Destination.kind(of: destination) == nil {
            throw .invalidDestination(destination)
        }
        guard message.utf8.count <= limits.maxTextBytes else {
            throw .textTooLong(field: .message, bytes: message.utf8.count, limit: limits.maxTextBytes)
        }
        let given = message.trimmingWhitespace().isEmpty ? nil : message
        // A text share's words are its text: an edited message replaces them rather than adding to them.
        let isText = current.intent.items.count == 1 && current.intent.items[0].kind == .text
        let words = isText ? current.intent.message : given ?? current.intent.message
        // The event that will go out, as the server counts it (EventSize), for every destination.
        try EventSize.check(
            words: [words].compactMap { $0 }
                + current.intent.items.compactMap { item in
                    item.kind == .file ? nil : (isText ? given ?? item.text : item.text)
                })
        let (unique, chosen) = try chooseAccounts(for: destinations, named: named, of: current)
        // Queued while any of its accounts is signed in: the sender sends what it can, and the
        // share waits for the others' accounts only after that.
        let state = Routing.route(destinations: unique, signedIn: chosen.contains { accounts.account($0) != nil })
        let completed: Share?
        do throws(OutboxError) {
            completed = try outbox.complete(
                id: id, destinations: unique, message: words, text: isText ? given : nil,
                state: state, accounts: chosen, at: clock())
        } catch {
            throw .storageFailed(.destinations, reason: error.reason)
        }
        guard let completed else {
            // Changed since it was read: cancelled, or completed from another window.
            guard let now = stateNow(of: id) else { throw .noSuchShare(id) }
            throw .notCompletable(id, state: now)
        }
        logger.info("share completed", metadata: ["id": "\(id)", "destinations": "\(unique.count)"])
        announce(.shareChanged(completed))
        announcePendingWork()
        sender.wake()
        return completed
    }

    /// The destinations, each once (a room of two accounts may be named once for each), and the
    /// account each goes out as: the one named for it, or the share's own (made for an account),
    /// or the one that has it. An account named must be signed in, and be the share's own if it has one.
    private func chooseAccounts(
        for destinations: [String], named given: [String?]?, of share: Share
    ) throws(ShareError) -> (destinations: [String], accounts: [String]) {
        let named = given ?? destinations.map { _ in nil }
        for account in Set(named.compactMap { $0 }) where self.accounts.account(account) == nil {
            throw .invalidArgument(
                // TRANSLATORS: {account} is a Matrix user id.
                tr(
                    "{account} is not signed in; sign in to it first, or choose a room of another account.",
                    [
                        "account": account
                    ]))
        }
        // A share made for an account (`--account`) goes out as that account only: a room of another
        // account chosen for it is refused, not sent as someone the sharer did not name.
        if let own = share.account, let other = named.compactMap({ $0 }).first(where: { $0 != own }) {
            throw .invalidArgument(
                // TRANSLATORS: {account} and {other} are Matrix user ids.
                tr(
                    "This share is to go out as {account}; choose a room of that account, not of {other}.",
                    [
                        "account": own, "other": other,
                    ]))
        }
        let chosen =
            share.account.map { user in destinations.map { _ in user } }
            ?? Self.accounts(for: destinations, accounts: accounts, owners: owners)
        var seen: Set<String> = []
        var unique: [String] = []
        var accountsOf: [String] = []
        for (position, destination) in destinations.enumerated() {
            let account =
                (named.indices.contains(position) ? named[position] : nil)
                ?? (chosen.indices.contains(position) ? chosen[position] : nil)
            guard seen.insert("\(account ?? "")\n\(destination)").inserted else { continue }
            unique.append(destination)
            if let account { accountsOf.append(account) }
        }
        // Nobody signed in: the share is nobody's yet, and whoever signs in sends it.
        return (unique, accountsOf.count == unique.count ? accountsOf : [])
    }

    /// `Retry`: failed deliveries are queued again, waiting ones are tried at once; a queued or
    /// sending share is simply looked at now. A share waiting for a person is theirs to move on.
    public func retry(id: String) throws(ShareError) -> Share {
        let current = try share(id: id)
        guard current.state == .failed || current.state.isPendingWork else {
            throw .notRetryable(id, state: current.state)
        }
        for (position, delivery) in current.deliveries.enumerated()
        where delivery.state == .failed || delivery.state == .retrying {
            do throws(OutboxError) {
                _ = try outbox.updateDelivery(shareID: id, position: position) {
                    $0.state = .queued
                    $0.failure = nil
                    $0.retryAt = nil
                    $0.attempts = 0
                }
            } catch {
                // A delivery left failed would settle the share as failed again at once: the retry
                // is refused instead, with the share's own state unchanged (Retry may be asked again).
                throw .storageFailed(.retry, reason: error.reason)
            }
        }
        // Another person's share waits for them to sign in again, however often it is retried.
        let state = Routing.route(
            destinations: current.intent.destinations,
            signedIn: current.account == nil
                ? accounts.latest != nil : current.accounts.contains { accounts.account($0) != nil })
        let changed: Share?
        do throws(OutboxError) {
            // Compare-and-set: a share cancelled meanwhile stays cancelled.
            changed = try outbox.update(
                id: id, state: state == .queued ? .sending : state, at: clock(), from: [current.state])
        } catch {
            throw .storageFailed(.retry, reason: error.reason)
        }
        guard let retried = changed else { throw .notRetryable(id, state: stateNow(of: id) ?? current.state) }
        logger.info("share retried", metadata: ["id": "\(id)"])
        announce(.shareChanged(retried))
        announcePendingWork()
        sender.wake(now: true)
        return retried
    }

    /// The sender finished a share: a notification, and the destination list's recents change.
    func senderFinished(_ share: Share) {
        announcePendingWork()
        // Each delivery went out as its own account; with several signed in, the notification
        // says which one sent where.
        let sessions = share.deliveries.indices.map { position in
            (share.account(at: position).flatMap(accounts.account) ?? accounts.latest)?.current
        }
        let severalAccounts = accounts.signedIn.count > 1
        Task { [directory, announcements] in
            await directory.forget()
            var names: [String] = []
            for (position, (delivery, session)) in zip(share.deliveries, sessions).enumerated() {
                let name: String?
                let sender = severalAccounts ? share.account(at: position) ?? session?.userID : nil
                if let roomID = delivery.roomID, let session {
                    name = await directory.displayName(of: roomID, session: session)
                } else {
                    name = nil
                }
                let shown = name ?? delivery.destination
                // TRANSLATORS: a room in a notification's "Sent to …" with several accounts signed in; {room} is its
                // name, {account} the Matrix user id it was sent as.
                names.append(sender.map { tr("{room} (as {account})", ["room": shown, "account": $0]) } ?? shown)
            }
            announcements.value(.finished(share, destinationNames: names))
        }
    }

    /// How many shares are in each state (none counted when the outbox cannot be read: logged).
    func countsByState() -> [ShareState: Int] {
        logger.attempt("counting the shares") { try outbox.countsByState() } ?? [:]
    }
}
