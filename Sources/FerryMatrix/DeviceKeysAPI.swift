import FerryCore
import Foundation
import NIOHTTP1

/// The end-to-end encryption key endpoints of the client-server API: the device's keys up,
/// other devices' keys down, one-time keys claimed, to-device messages out. Bodies are
/// `JSONValue`, so signed objects reach the server exactly as they were signed.
public struct DeviceKeysAPI: Sendable {
    let http: MatrixHTTP

    public init(http: MatrixHTTP) { self.http = http }

    /// `POST /keys/upload`: the device keys (once; nil afterwards), new one-time keys and a new
    /// fallback key. Returns how many one-time keys the server now holds, by algorithm.
    public func upload(
        deviceKeys: JSONValue?, oneTimeKeys: [String: JSONValue], fallbackKeys: [String: JSONValue]
    ) async throws(MatrixError) -> [String: Int] {
        var body: [String: JSONValue] = [:]
        if let deviceKeys { body["device_keys"] = deviceKeys }
        if !oneTimeKeys.isEmpty { body["one_time_keys"] = .object(oneTimeKeys) }
        if !fallbackKeys.isEmpty { body["fallback_keys"] = .object(fallbackKeys) }
        struct Answer: Decodable { var one_time_key_counts: [String: LenientNumber]? }
        let answer = try await http.call(
            .POST, "/_matrix/client/v3/keys/upload", json: JSONValue.object(body), as: Answer.self)
        return (answer.one_time_key_counts ?? [:]).compactMapValues { $0.value.flatMap { Int(exactly: $0) } }
    }

    /// `POST /keys/query`: the device keys of `users`, as the server answers them (`device_keys`:
    /// user → device → signed keys). The caller checks every device's self-signature.
    public func query(users: [String]) async throws(MatrixError) -> JSONValue {
        try await queryAnswer(users: users)["device_keys"] ?? [:]
    }

    /// `POST /keys/query`'s whole answer: `device_keys`, and the cross-signing keys
    /// (`master_keys`, `self_signing_keys`: user → key object).
    public func queryAnswer(users: [String]) async throws(MatrixError) -> JSONValue {
        let body: JSONValue = [
            "device_keys": .object(Dictionary(users.map { ($0, JSONValue.array([])) }, uniquingKeysWith: { a, _ in a }))
        ]
        return try await http.call(.POST, "/_matrix/client/v3/keys/query", json: body, as: LenientJSON.self).value
    }

    /// `POST /keys/claim`: one `signed_curve25519` key for each device (user → device ids);
    /// the answer's `one_time_keys` (user → device → key id → signed key).
    public func claim(_ devices: [String: [String]]) async throws(MatrixError) -> JSONValue {
        let wanted = devices.mapValues { ids in
            JSONValue.object(Dictionary(uniqueKeysWithValues: ids.map { ($0, JSONValue.string("signed_curve25519")) }))
        }
        let body: JSONValue = ["one_time_keys": .object(wanted)]
        return try await http.call(.POST, "/_matrix/client/v3/keys/claim", json: body, as: LenientJSON.self).value[
            "one_time_keys"] ?? [:]
    }

    /// `PUT /sendToDevice/{type}/{txn}`: one message per device (user → device → content); the
    /// same transaction id again is not delivered twice.
    public func sendToDevice(
        type: String, transactionID: String, messages: [String: [String: JSONValue]]
    ) async throws(MatrixError) {
        let body: JSONValue = ["messages": .object(messages.mapValues { .object($0) })]
        let path =
            "/_matrix/client/v3/sendToDevice/"
            + "\(MatrixHTTP.percentEncoded(type))/\(MatrixHTTP.percentEncoded(transactionID))"
        _ = try await http.call(.PUT, path, json: body, as: JSONValue.self)
    }

    /// `POST /keys/signatures/upload`: signatures made by a cross-signing key (user → key or
    /// device id → the signed object). Returns the server's `failures` (empty when every one was
    /// taken).
    public func uploadSignatures(_ signed: [String: [String: JSONValue]]) async throws(MatrixError) -> JSONValue {
        let body = JSONValue.object(signed.mapValues { .object($0) })
        let answer = try await http.call(
            .POST, "/_matrix/client/v3/keys/signatures/upload", json: body, as: LenientJSON.self
        ).value
        return answer["failures"] ?? [:]
    }

    /// `POST /keys/device_signing/upload`: a new cross-signing identity (each key object signed
    /// as the spec asks). Without auth, as MSC3967 servers take an account's first identity; with
    /// a password, through user-interactive auth (`m.login.password`) in the session that the
    /// server's 401 opened.
    public func uploadSigningKeys(_ keys: [String: JSONValue], password: PasswordAuth? = nil) async throws(MatrixError)
    {
        var body = keys
        if let password {
            body["auth"] = [
                "type": "m.login.password", "session": .string(password.session),
                "password": .string(password.password),
                "identifier": ["type": "m.id.user", "user": .string(password.userID)],
            ]
        }
        _ = try await http.call(
            .POST, "/_matrix/client/v3/keys/device_signing/upload", json: JSONValue.object(body), as: JSONValue.self)
    }

    /// The password stage of user-interactive auth.
    public struct PasswordAuth: Sendable {
        public var userID: String
        public var password: String
        /// The session of the server's 401.
        public var session: String

        public init(userID: String, password: String, session: String) {
            self.userID = userID
            self.password = password
            self.session = session
        }
    }
}
