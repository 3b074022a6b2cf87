import FerryCore
import FerryMatrix

/// Turns a destination as a person named it into the room to send to: a room id is taken as it is
/// (room ids are opaque), an alias is looked up, a person means the direct chat with them — the
/// one in `m.direct` that the account is still in, or a new one.
struct DestinationResolver {
    let rooms: Rooms

    func roomID(for destination: String) async throws(MatrixError) -> String {
        switch Destination.kind(of: destination) {
        case .roomAlias: return try await rooms.resolve(alias: destination)
        case .userID: return try await directChat(with: destination)
        case .roomID, nil: return destination
        }
    }

    private func directChat(with person: String) async throws(MatrixError) -> String {
        let joined = Set(try await rooms.joined())
        if let existing = try await rooms.directChats()[person]?.last(where: joined.contains) {
            return existing
        }
        return try await rooms.createDirectChat(with: person)
    }
}
