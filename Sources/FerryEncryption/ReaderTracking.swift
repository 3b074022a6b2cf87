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
        startTracking(session)
        // The token asked from, not the one tracking is at when the answer comes: an emoji
        // verification's sync may have moved it meanwhile, and then this answer is stale.
        let asked = tracking?.since
        let changes: RoomChanges
        do { changes = try await RoomChanges.since(asked, http: http) } catch { throw .server(error) }
        take(changes, asked: asked)
        await handleInbox(session: session, http: http)
        if let unused = changes.unusedFallbackKeyTypes, !unused.contains("signed_curve25519") {
            try await replaceUsedFallbackKey(session)
        }
        if var known = tracking?.rooms[roomID] {
            if known.devicesChanged {
                let listedFrom = tracking?.since
                known.listed = try pinned(
                    await KeySharing.devices(
                        of: known.readers.users, except: session,
                        api: DeviceKeysAPI(http: http), logger: logger), session: session)
                known.devicesChanged = false
                tracking?.remember(known, for: roomID, readFrom: listedFrom, signedInWith: session.trackingKey)
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
        let listed = try pinned(
            await KeySharing.devices(
                of: readers.users, except: session, api: DeviceKeysAPI(http: http), logger: logger), session: session)
        let known = KnownRoom(settings: settings, readers: readers, listed: listed)
        tracking?.remember(known, for: roomID, readFrom: since, signedInWith: session.trackingKey)
        return known
    }

    /// Tracking for this sign-in: what was known under another sign-in is forgotten. (Not keyed by
    /// the access token: a renewal changes it, and tracking would start over with a full sync.)
    func startTracking(_ session: Session) {
        if tracking?.signIn != session.trackingKey {
            tracking = Tracking(signIn: session.trackingKey)
        }
    }

    /// Applies what a sync said, if it answered the token tracking is at: the answer's
    /// verification messages go to the inbox while an emoji verification listens (they are gone
    /// from the server once the next sync asks from its token).
    func take(_ changes: RoomChanges, asked since: String?) {
        guard tracking?.take(changes, asked: since) == true else { return }
        keepVerificationMessages(changes.toDevice)
        keepInbox(changes.toDevice)
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

/// The rooms known for one sign-in, and the sync token changes are asked from. Plain values, no
/// I/O: the actor asks the server and hands the answers in, and the rules for which answer may
/// change what is known live here, where unit tests reach them (ReaderTrackingTests).
///
/// Answers come back out of order: an event's sync and an emoji verification's long poll can
/// both be out, and a room's readers can take several requests to read. Whatever was read from an
/// older token than the one tracking is at now is used for the one event it was read for, never
/// kept: a sync in between may have said it changed.
struct Tracking: Sendable {
    /// Which sign-in this is (`Session.trackingKey`).
    let signIn: String
    private(set) var since: String?
    private(set) var rooms: [String: KnownRoom] = [:]

    init(signIn: String) {
        self.signIn = signIn
    }

    /// Applies a sync's answer to the token `asked`: the rooms it names are forgotten (read in
    /// full next time), and a room with a reader whose devices changed has them listed again.
    /// An answer to an older token changes nothing and says false: the sync that moved tracking
    /// on already brought its changes, and its messages were handed on then.
    mutating func take(_ changes: RoomChanges, asked: String?) -> Bool {
        guard since == asked else { return false }
        if asked != nil {
            for room in changes.rooms { rooms[room] = nil }
            for (room, known) in rooms where known.readers.users.contains(where: changes.users.contains) {
                rooms[room]?.devicesChanged = true
            }
        }
        since = changes.next
        return true
    }

    /// Keeps what was read of a room from the token `readFrom`, when tracking is still there:
    /// a change made after that token is then still to come from the next sync. Read before
    /// any token (the first sync not answered yet), or under another sign-in (tokens of a new one
    /// can repeat an old one's), it is not kept either.
    mutating func remember(
        _ known: KnownRoom, for roomID: String, readFrom token: String?, signedInWith signIn: String
    ) {
        guard let token, token == since, signIn == self.signIn else { return }
        rooms[roomID] = known
    }
}

extension Session {
    /// One sign-in, however often its access token is renewed: its device and its sign-in number.
    var trackingKey: String { "\(deviceID)#\(signIn)" }
}
