import FerryCore
import FerryMatrix
import Foundation

/// Who reads each encrypted room, kept up to date the way Matrix clients do it: read in full the
/// first time, then changed only by what `/sync` says changed (members, history visibility,
/// encryption, a reader's devices), never trusted from an old answer: every event asks one sync
/// (timeout 0) first.
///
/// Not a long poll held open between sends, though it would save that sync: Synapse recomputes a
/// waiting sync on every event in any of the person's rooms, which slowed plain sends
/// (docs/PERFORMANCE.md, "Encrypted rooms").
extension Encryption {
    /// The room's settings, readers and their devices.
    func readers(of roomID: String, session: Session, http: MatrixHTTP) async throws(EncryptionFailure) -> KnownRoom {
        if tracking?.accessToken != session.accessToken {
            tracking = Tracking(accessToken: session.accessToken)
        }
        // The token asked from, not the one tracking is at when the answer comes: an emoji
        // verification's sync may have moved it meanwhile, and then this answer is stale.
        let asked = tracking?.since
        let changes: RoomChanges
        do { changes = try await RoomChanges.since(asked, http: http) } catch { throw .server(error) }
        take(changes, asked: asked)
        if var known = tracking?.rooms[roomID] {
            if known.devicesChanged {
                known.listed = try await KeySharing.devices(
                    of: known.readers.users, except: session,
                    api: DeviceKeysAPI(http: http), logger: logger)
                known.devicesChanged = false
                tracking?.rooms[roomID] = known
            }
            return known
        }
        let since = tracking?.since
        let rooms = EncryptedRooms(http: http)
        let settings: EncryptedRooms.Settings?
        let readers: EncryptedRooms.Readers
        do {
            settings = try await rooms.settings(of: roomID)
            readers = try await rooms.readers(of: roomID)
        } catch {
            throw .server(error)
        }
        // TRANSLATORS: completes "{room} is end-to-end encrypted and Ferry could not encrypt for it: {reason}. Nothing
        // was sent there unencrypted."
        guard let settings else { throw .crypto(tr("the room is no longer encrypted as it was")) }
        let listed = try await KeySharing.devices(
            of: readers.users, except: session, api: DeviceKeysAPI(http: http), logger: logger)
        let known = KnownRoom(settings: settings, readers: readers, listed: listed)
        // Kept only when the token it is tracked from was taken before the room was read: a
        // change in between is then still to come.
        if tracking?.since == since, since != nil { tracking?.rooms[roomID] = known }
        return known
    }

    /// Applies what a sync said, if it answered the token tracking is at: the answer's
    /// verification messages go to the inbox while an emoji verification listens (they are gone
    /// from the server once the next sync asks from its token).
    func take(_ changes: RoomChanges, asked since: String?) {
        guard tracking != nil, tracking?.since == since else { return }
        keepVerificationMessages(changes.toDevice)
        if since != nil {
            for room in changes.rooms { tracking?.rooms[room] = nil }
            for (room, known) in tracking?.rooms ?? [:]
            where known.readers.users.contains(where: changes.users.contains) {
                tracking?.rooms[room]?.devicesChanged = true
            }
        }
        tracking?.since = changes.next
    }
}

/// A room's readers as last read, kept while syncs say nothing about them changed.
struct KnownRoom: Sendable {
    var settings: EncryptedRooms.Settings
    var readers: EncryptedRooms.Readers
    var listed: KeySharing.Listed
    /// A reader's devices changed since `listed` was read: they are queried again.
    var devicesChanged = false
}

/// The rooms known for one sign-in, and the sync token changes are asked from.
struct Tracking: Sendable {
    let accessToken: String
    var since: String?
    var rooms: [String: KnownRoom] = [:]

    init(accessToken: String) {
        self.accessToken = accessToken
    }
}
