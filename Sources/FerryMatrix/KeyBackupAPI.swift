import FerryCore

/// Server-side key backup (`/room_keys`): which backup the account has, and a room key put into
/// it. The keys go up encrypted (FerryCrypto's `KeyBackup`); the server only keeps them.
public struct KeyBackupAPI: Sendable {
    let http: MatrixHTTP

    public init(http: MatrixHTTP) { self.http = http }

    /// The account's current backup, as `GET /room_keys/version` describes it.
    public struct Version: Sendable {
        public var version: String
        public var algorithm: String
        public var authData: JSONValue
    }

    /// The current backup, or nil when the account has none (404 `M_NOT_FOUND`).
    public func current() async throws(MatrixError) -> Version? {
        let answer: JSONValue
        do {
            answer = try await http.call(.GET, "/_matrix/client/v3/room_keys/version", as: LenientJSON.self).value
        } catch let error where error.status == 404 {
            return nil
        }
        guard let version = answer["version"]?.stringValue, let algorithm = answer["algorithm"]?.stringValue,
            let authData = answer["auth_data"]
        else {
            throw MatrixError(kind: .malformed, message: "a key backup version without version, algorithm or auth_data")
        }
        return Version(version: version, algorithm: algorithm, authData: authData)
    }

    /// `PUT /room_keys/keys/{room}/{session}?version=`: one session's `KeyBackupData`. The server
    /// keeps the better of what it holds and this (an earlier first index wins), so a retry is
    /// harmless. A backup replaced since answers 403 `M_WRONG_ROOM_KEYS_VERSION`.
    public func put(_ data: JSONValue, roomID: String, sessionID: String, version: String) async throws(MatrixError) {
        let path =
            "/_matrix/client/v3/room_keys/keys/\(MatrixHTTP.percentEncoded(roomID))/"
            + MatrixHTTP.percentEncoded(sessionID)
        _ = try await http.call(.PUT, path, query: [("version", version)], json: data, as: JSONValue.self)
    }
}
