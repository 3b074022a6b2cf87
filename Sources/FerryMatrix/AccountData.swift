import FerryCore

/// The signed-in person's account data (`/user/{userId}/account_data/{type}`): where secret
/// storage keeps its key descriptions and the secrets encrypted under them.
public struct AccountData: Sendable {
    let http: MatrixHTTP
    let userID: String

    public init(http: MatrixHTTP, userID: String) {
        self.http = http
        self.userID = userID
    }

    /// The content of `type`, or nil when the account has none (404 `M_NOT_FOUND`).
    public func get(_ type: String) async throws(MatrixError) -> JSONValue? {
        do {
            return try await http.call(.GET, path(type), as: LenientJSON.self).value
        } catch let error where error.status == 404 {
            return nil
        }
    }

    /// Sets `type` to `content`.
    public func put(_ type: String, _ content: JSONValue) async throws(MatrixError) {
        _ = try await http.call(.PUT, path(type), json: content, as: JSONValue.self)
    }

    private func path(_ type: String) -> String {
        "/_matrix/client/v3/user/\(MatrixHTTP.percentEncoded(userID))/account_data/\(MatrixHTTP.percentEncoded(type))"
    }
}
