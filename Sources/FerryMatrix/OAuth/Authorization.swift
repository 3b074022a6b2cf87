import AsyncHTTPClient
import Crypto
import FerryCore
import Foundation

/// One sign-in through the OAuth 2.0 API: the authorization code grant with PKCE (RFC 7636,
/// S256) and `state`, for a device id Ferry chose, returning to a loopback address (RFC 8252).
///
/// The code the browser brings back is worth nothing without `verifier`, which never leaves
/// Ferry: a program on this computer that hands Ferry's listener a code of its own (for its own
/// account) fails at the token endpoint, and one that reads the browser's address gets a code it
/// cannot exchange.
public struct Authorization: Sendable {
    public let metadata: AuthMetadata
    public let client: OAuthClient
    public let deviceID: String
    public let redirectURI: String
    /// Single use, compared with the answer's before anything else is read.
    public let state: String
    let verifier: String

    /// `deviceID`: the device to sign in as again (its keys are kept), or nil for a new one.
    /// `state`: the one the loopback listener waits for (`newState`).
    public init(metadata: AuthMetadata, client: OAuthClient, deviceID: String?, port: Int, state: String) {
        self.metadata = metadata
        self.client = client
        self.deviceID = deviceID.flatMap { Self.isDeviceID($0) ? $0 : nil } ?? Self.newDeviceID()
        redirectURI = client.redirect(port: port)
        self.state = state
        verifier = Random.alphanumeric(64)
    }

    /// A new `state`: 190 random bits.
    public static func newState() -> String { Random.alphanumeric(32) }

    /// The scopes: the whole client-server API, as this device (Matrix 1.15).
    public var scope: String { "urn:matrix:client:api:* urn:matrix:client:device:\(deviceID)" }

    /// RFC 7636's S256: the verifier's SHA-256, base64url without padding.
    var challenge: String { Self.challenge(of: verifier) }

    static func challenge(of verifier: String) -> String {
        base64URL(Array(SHA256.hash(data: Data(verifier.utf8))))
    }

    /// Where the browser goes; `createAccount` opens the server's page at "create an account".
    public func url(createAccount: Bool) -> String {
        var query = [
            ("response_type", "code"), ("client_id", client.clientID), ("redirect_uri", redirectURI),
            ("scope", scope), ("state", state), ("code_challenge", challenge), ("code_challenge_method", "S256"),
            ("response_mode", "query"),
        ]
        if createAccount, metadata.offersAccountCreation { query.append(("prompt", "create")) }
        let endpoint = metadata.authorizationEndpoint
        let joined = MatrixHTTP.queryString(query)
        return endpoint.contains("?") ? endpoint + "&" + joined.dropFirst() : endpoint + joined
    }

    /// Exchanges the code the browser brought back for the sign-in's tokens (RFC 6749 §4.1.3),
    /// after checking the answer came from this authorization server (RFC 9207's `iss`, where it
    /// names itself).
    public func tokens(
        for code: String, issuer: String?, client http: HTTPClient = .ferry
    ) async throws(MatrixError)
        -> Tokens.Pair
    {
        if let issuer, issuer != metadata.issuer {
            throw AuthMetadata.refusal(
                // TRANSLATORS: a reason, completing "The sign-in service of {server} cannot be used: {reason}.";
                // {issuer} is a web address.
                tr("the sign-in came back from {issuer}, not the server the homeserver names", ["issuer": issuer]))
        }
        if issuer == nil, metadata.namesItselfInAnswers {
            throw AuthMetadata.refusal(tr("the sign-in came back without naming its server"))
        }
        let answer = try await MatrixHTTP(exactly: metadata.tokenEndpoint, client: http).postForm(
            [
                ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirectURI),
                ("client_id", client.clientID), ("code_verifier", verifier),
            ], as: TokenAnswer.self)
        return try answer.pair(grant: OAuthGrant(metadata: metadata, client: client), keeping: nil)
    }

    /// An error the authorization server sent the browser back with (RFC 6749 §4.1.2.1), in words.
    public static func describe(error: String, description: String?) -> String {
        // The server's words, shown as they are but never able to rearrange the sentence.
        let code = SafeDisplay.escaped(String(error.prefix(64)))
        guard let description, !description.isEmpty else {
            // TRANSLATORS: a reason, completing "The sign-in service of {server} cannot be used: {reason}.";
            // {error} is the server's code for it, such as "invalid_scope".
            return tr("it ended the sign-in with “{error}”", ["error": code])
        }
        return tr(
            // TRANSLATORS: a reason, completing "The sign-in service of {server} cannot be used: {reason}.";
            // {error} is the server's code for it, such as "invalid_scope", {description} its own words.
            "it ended the sign-in with “{error}”: {description}",
            ["error": code, "description": SafeDisplay.escaped(String(description.prefix(300)))])
    }

    /// Ferry's device ids: 12 characters of `[A-Za-z0-9]` (Matrix 1.15 asks for at least 10 of
    /// `[A-Za-z0-9-]`; Synapse's own are 10 capitals).
    static func newDeviceID() -> String { Random.alphanumeric(12) }

    static func isDeviceID(_ text: String) -> Bool {
        text.utf8.count >= 10
            && text.utf8.allSatisfy {
                (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0)
                    || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || $0 == UInt8(ascii: "-")
            }
    }

    static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}

/// Where an OAuth sign-in's tokens are renewed and ended, kept with them.
public struct OAuthGrant: Sendable, Equatable, Codable {
    public var issuer: String
    public var clientID: String
    public var tokenEndpoint: String
    public var revocationEndpoint: String?

    /// The names it is kept under, as OAuth writes them.
    enum CodingKeys: String, CodingKey {
        case issuer, clientID = "client_id", tokenEndpoint = "token_endpoint"
        case revocationEndpoint = "revocation_endpoint"
    }

    public init(metadata: AuthMetadata, client: OAuthClient) {
        issuer = metadata.issuer
        clientID = client.clientID
        tokenEndpoint = metadata.tokenEndpoint
        revocationEndpoint = metadata.revocationEndpoint
    }

    /// Ends the sign-in at the authorization server (RFC 7009): the refresh token, which ends the
    /// whole session there, or the access token where there is none.
    public func revoke(_ pair: Tokens.Pair, client: HTTPClient = .ferry) async throws(MatrixError) {
        guard let revocationEndpoint else {
            throw MatrixError(
                kind: .refused,
                // TRANSLATORS: why signing out could not end the sign-in at the server.
                message: tr("the homeserver's sign-in service offers no way to end a sign-in"))
        }
        let token = pair.refresh ?? pair.access
        try await MatrixHTTP(exactly: revocationEndpoint, client: client).sendForm(
            [
                ("token", token), ("token_type_hint", pair.refresh == nil ? "access_token" : "refresh_token"),
                ("client_id", clientID),
            ], timeout: .seconds(10))
    }
}

/// The token endpoint's answer (RFC 6749 §5.1).
struct TokenAnswer: Decodable {
    var access_token: String
    var token_type: String?
    var refresh_token: String?
    var expires_in: LenientNumber?

    /// The pair; a refresh without a new refresh token keeps the old one (RFC 6749 §6).
    func pair(grant: OAuthGrant, keeping oldRefresh: String?) throws(MatrixError) -> Tokens.Pair {
        // RFC 6749 §5.1: token_type is required; Matrix takes only bearer tokens.
        guard token_type?.lowercased() == "bearer", !access_token.isEmpty else {
            throw MatrixError(kind: .malformed, message: "token endpoint: not a bearer token")
        }
        // Seconds here, where Matrix's own refresh says milliseconds.
        let milliseconds = expires_in?.value.flatMap {
            $0.isFinite && $0 >= 0.001 && $0 < 1e10 ? Int64($0 * 1000) : nil
        }
        var pair = Tokens.Pair(
            access: access_token, refresh: refresh_token ?? oldRefresh, expiresInMilliseconds: milliseconds)
        pair.oauth = grant
        return pair
    }
}
