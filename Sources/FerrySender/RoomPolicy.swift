import FerryMatrix

/// What the sender believes of each room's encryption, and for how long: the answers that decide
/// which channel a delivery writes through (`Homeserver.channel(to:serverSaysEncrypted:)`).
///
/// Encryption can be switched on at any time, so a "no" is trusted for a minute only (and asked
/// again before each event after that); a "yes" is for good, whatever a server says later:
/// encryption cannot be switched off, and a server that claims so is not believed.
struct RoomPolicy {
    /// How long a room's "not encrypted" is believed, in microseconds.
    static let plainAnswerLifetime: Int64 = 60_000_000

    private var encrypted: Set<String> = []
    private var plainUntil: [String: Int64] = [:]

    /// What is known of the room now; nil when the server has to be asked.
    func isEncrypted(_ roomID: String, now: Int64) -> Bool? {
        if encrypted.contains(roomID) { return true }
        if let until = plainUntil[roomID], until > now { return false }
        return nil
    }

    /// The server's answer; a "no" after a "yes" changes nothing.
    mutating func record(_ roomID: String, encrypted isEncrypted: Bool, now: Int64) {
        if isEncrypted {
            encrypted.insert(roomID)
            plainUntil[roomID] = nil
        } else if !encrypted.contains(roomID) {
            plainUntil[roomID] = now + Self.plainAnswerLifetime
        }
    }
}

extension Sender {
    /// Whether the room is encrypted, by the policy's memory or else by asking the server.
    func isEncrypted(_ roomID: String, on homeserver: any Homeserver) async throws(MatrixError) -> Bool {
        if let known = roomPolicy.isEncrypted(roomID, now: clock()) { return known }
        let encrypted = try await homeserver.isEncrypted(roomID)
        roomPolicy.record(roomID, encrypted: encrypted, now: clock())
        return encrypted
    }

    /// The room policy's decision, as the channel a delivery (or an early upload) writes through.
    func channel(to roomID: String, on homeserver: any Homeserver) async throws(MatrixError) -> any RoomChannel {
        try homeserver.channel(to: roomID, serverSaysEncrypted: try await isEncrypted(roomID, on: homeserver))
    }

    /// The largest upload the server at `url` takes, asked at most every ten minutes (each
    /// account's server has its own).
    func serverUploadLimit(_ homeserver: any Homeserver, at url: String) async throws(MatrixError) -> UInt64? {
        if let known = uploadLimits[url], known.until > clock() { return known.bytes }
        let bytes = try await homeserver.uploadLimit()
        uploadLimits[url] = (bytes, clock() + 600_000_000)
        return bytes
    }
}
