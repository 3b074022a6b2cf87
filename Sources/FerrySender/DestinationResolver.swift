import FerryCore
import FerryMatrix

/// Turns a destination as a person named it into the room to send to: a room id is taken as it is
/// (room ids are opaque), an alias is looked up, a person means the direct chat with them — the
/// one in `m.direct` that the account is still in, or a new one.
struct DestinationResolver {
    let rooms: any Homeserver

    /// A direct chat's creation, made idempotent: `marker` names the delivery, `begun` says whether
    /// an earlier attempt may have created the room already, and `beginning` is called (and must
    /// commit durably) right before createRoom.
    struct Creation {
        var marker: String
        var begun: Bool
        var beginning: () throws(MatrixError) -> Void
    }

    func roomID(for destination: String, creation: Creation? = nil) async throws(MatrixError) -> String {
        switch Destination.kind(of: destination) {
        case .roomAlias: return try await rooms.resolve(alias: destination)
        case .userID: return try await directChat(with: destination, creation: creation)
        case .roomID, nil: return destination
        }
    }

    private func directChat(with person: String, creation: Creation?) async throws(MatrixError) -> String {
        let joined = Set(try await rooms.joinedRooms())
        if let existing = try await rooms.directChats()[person]?.last(where: joined.contains) {
            return existing
        }
        guard let creation else { return try await rooms.createDirectChat(with: person, marker: nil) }
        // The server may have created the room before an earlier attempt could record it.
        if creation.begun, let created = try await rooms.directChat(createdWith: creation.marker) {
            try await rooms.recordDirectChat(created, with: person)
            return created
        }
        try creation.beginning()
        return try await rooms.createDirectChat(with: person, marker: creation.marker)
    }
}
