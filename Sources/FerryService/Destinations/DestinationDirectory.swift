import FerryAccount
import FerryContract
import FerryCore
import FerryMatrix
import FerryOutbox
import Logging

/// One place a share can go: the contract's entry, as `ListDestinations` answers it.
public typealias DestinationEntry = DestinationListing

/// The rooms, direct chats and people a person can share to, recents first. Room facts are kept
/// for a minute, so that a dialog filtering as someone types asks the server only for people.
public actor DestinationDirectory {
    private let outbox: Outbox
    /// Each account's rooms, by user id, and until when they are fresh.
    private var cache: [String: (until: Int64, entries: [DestinationEntry])] = [:]
    private let clock: @Sendable () -> Int64
    private let logger: Logger

    public init(outbox: Outbox, clock: @escaping @Sendable () -> Int64, logger: Logger) {
        self.outbox = outbox
        self.clock = clock
        self.logger = logger
    }

    private var names: [String: String] = [:]

    public func forget() { cache = [:] }

    /// A room's name for a person (a notification's "Sent to …"); asked once, then remembered.
    public func displayName(of roomID: String, session: Session) async -> String? {
        let cached = cache[session.userID]?.entries.first { $0.id == roomID }
        if let name = names[roomID] ?? cached?.name { return name }
        let rooms = Rooms(
            http: MatrixHTTP(session: session),
            userID: session.userID)
        guard let summary = try? await rooms.summary(of: roomID) else { return nil }
        let name = Self.name(of: summary, person: nil, me: session.userID)
        names[roomID] = name
        return name
    }

    static func name(of summary: RoomSummary, person: String?, me: String) -> String {
        let others = summary.joinedMembers.filter { $0 != me }
        return summary.name ?? person.map { summary.memberNames[$0] ?? $0 } ?? summary.canonicalAlias
            ?? (others.isEmpty ? summary.roomID : others.map { summary.memberNames[$0] ?? $0 }.joined(separator: ", "))
    }

    /// The picture a room is shown with, as clients show it: its own; for a direct chat, the other
    /// person's; for an unnamed room of two, the other member's.
    static func avatar(of summary: RoomSummary, person: String?, me: String) -> String? {
        if let avatar = summary.avatar { return avatar }
        if let person { return summary.memberAvatars[person] }
        let others = summary.joinedMembers.filter { $0 != me }
        guard summary.name == nil, others.count == 1 else { return nil }
        return summary.memberAvatars[others[0]]
    }

    /// `offline`: the homeserver did not answer the last request. Then the rooms known from before
    /// are the answer, and the server's people directory is not asked: a request to a server that is
    /// away takes its whole timeout, and the share dialog would wait that long for each letter typed.
    public func list(
        query: String, limit: Int, session: Session,
        offline: Bool = false
    ) async throws(MatrixError) -> [DestinationEntry] {
        let http = MatrixHTTP(session: session)
        let rooms = Rooms(http: http, userID: session.userID)
        var entries = try await joinedEntries(rooms, session: session, offline: offline)
        // Unread, the list comes without recents first: still every room.
        let recents = logger.attempt("reading the recent rooms") { try outbox.recentRooms(limit: 50) } ?? []
        let recentRank = Dictionary(recents.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        for index in entries.indices { entries[index].recent = recentRank[entries[index].id] != nil }
        let needle = query.trimmingWhitespace().lowercased()
        if !needle.isEmpty {
            entries = entries.filter { entry in
                [entry.name, entry.alias ?? "", entry.userID ?? "", entry.id].contains {
                    $0.lowercased().contains(needle)
                }
            }
            // A query that is not a room's sigil may be a person: the server's directory, for a new direct chat.
            if !needle.hasPrefix("#"), !needle.hasPrefix("!"), !offline {
                let known = Set(entries.compactMap(\.userID) + [session.userID])
                let people: [DirectoryUser]
                do {
                    people = try await rooms.searchUsers(query.trimmingWhitespace(), limit: max(limit, 10))
                } catch {
                    // The rooms found still answer: a directory that fails only finds no new person.
                    logger.notice("the user directory did not answer", metadata: ["reason": "\(error.message)"])
                    people = []
                }
                entries += people.filter { !known.contains($0.userID) }.map {
                    var person = DestinationEntry(
                        id: $0.userID, kind: .person, name: $0.displayName ?? $0.userID, alias: nil,
                        userID: $0.userID, members: 0, encrypted: false, lastActivity: nil, recent: false)
                    person.avatar = $0.avatar
                    return person
                }
            }
        }
        // Whose each destination is: a share to it goes out as that account.
        for index in entries.indices { entries[index].account = session.userID }
        return Self.ordered(entries, recentRank: recentRank, limit: limit)
    }

    /// Several accounts' lists as one, in the same order (recents first across accounts); a room
    /// two accounts joined is there once for each.
    public func merged(_ lists: [[DestinationEntry]], limit: Int) -> [DestinationEntry] {
        let recents = logger.attempt("reading the recent rooms") { try outbox.recentRooms(limit: 50) } ?? []
        let recentRank = Dictionary(recents.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        return Self.ordered(lists.flatMap { $0 }, recentRank: recentRank, limit: limit)
    }

    /// Recents first (the latest first), then rooms by their last activity, then people.
    private static func ordered(
        _ entries: [DestinationEntry], recentRank: [String: Int], limit: Int
    ) -> [DestinationEntry] {
        let sorted = entries.sorted { a, b in
            switch (recentRank[a.id], recentRank[b.id]) {
            case (let x?, let y?): return x < y
            case (_?, nil): return true
            case (nil, _?): return false
            case (nil, nil):
                if a.kind == .person || b.kind == .person { return a.kind != .person && b.kind == .person }
                return (a.lastActivity ?? 0) > (b.lastActivity ?? 0)
            }
        }
        return limit > 0 ? Array(sorted.prefix(limit)) : sorted
    }

    private func joinedEntries(
        _ rooms: Rooms, session: Session,
        offline: Bool
    ) async throws(MatrixError) -> [DestinationEntry] {
        if let cached = cache[session.userID], cached.until > clock() || offline { return cached.entries }
        let ids: [String]
        do {
            ids = try await rooms.joined()
        } catch {
            // Offline, the rooms known a while ago beat none: the share dialog can still be
            // completed, and the outbox sends when the homeserver answers again.
            if error.kind == .transport, let cached = cache[session.userID] { return cached.entries }
            throw error
        }
        let direct = try await rooms.directChats()
        var personByRoom: [String: String] = [:]
        for (person, roomIDs) in direct { for room in roomIDs { personByRoom[room] = person } }
        var entries: [DestinationEntry] = []
        for roomID in ids {
            let summary: RoomSummary
            do {
                summary = try await rooms.summary(of: roomID)
            } catch {
                // One room the server cannot describe now is left out of the list, not the others.
                logger.notice(
                    "a joined room is left out of the destinations",
                    metadata: ["room": "\(roomID)", "reason": "\(error.message)"])
                continue
            }
            let person = personByRoom[roomID]
            let name = Self.name(of: summary, person: person, me: session.userID)
            var entry = DestinationEntry(
                id: roomID, kind: person == nil ? .room : .direct, name: name,
                alias: summary.canonicalAlias, userID: person,
                members: summary.joinedMembers.count, encrypted: summary.encrypted,
                lastActivity: summary.lastActivity, recent: false)
            entry.avatar = Self.avatar(of: summary, person: person, me: session.userID)
            entries.append(entry)
        }
        cache[session.userID] = (clock() + 60_000_000, entries)
        return entries
    }
}
