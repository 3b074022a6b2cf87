import AsyncHTTPClient
import FerryCore
import Foundation
import NIOHTTP1

/// An account's credentials as the homeserver issued them.
public struct Session: Sendable, Equatable {
    public var userID: String
    public var homeserver: String
    public var deviceID: String
    /// Shared by every copy of this session: a renewal is seen by all of them.
    public let tokens: Tokens
    /// Which of this Ferry's sign-ins this is: a number that grows with each (kept in the outbox).
    public var signIn: Int64

    /// The access token as it is now (it changes where the server lets tokens expire).
    public var accessToken: String { tokens.access }

    public init(userID: String, homeserver: String, deviceID: String, tokens: Tokens, signIn: Int64 = 0) {
        self.userID = userID
        self.homeserver = homeserver
        self.deviceID = deviceID
        self.tokens = tokens
        self.signIn = signIn
    }

    public init(userID: String, homeserver: String, deviceID: String, accessToken: String, signIn: Int64 = 0) {
        self.init(
            userID: userID, homeserver: homeserver, deviceID: deviceID, tokens: Tokens(access: accessToken),
            signIn: signIn)
    }

    /// The same sign-in: one set of tokens (however often renewed) for the same person and device.
    public static func == (lhs: Session, rhs: Session) -> Bool {
        lhs.tokens === rhs.tokens && lhs.userID == rhs.userID && lhs.homeserver == rhs.homeserver
            && lhs.deviceID == rhs.deviceID && lhs.signIn == rhs.signIn
    }
}

/// The ways a homeserver lets people sign in (`GET /_matrix/client/v3/login`).
public struct LoginFlows: Sendable, Equatable {
    public var homeserver: String
    public var password: Bool
    /// A sign-in in the browser: legacy SSO, or the OAuth 2.0 API (`oauth`).
    public var sso: Bool
    public var token: Bool
    /// The OAuth 2.0 API's authorization server, where the homeserver uses one.
    public var oauth: AuthMetadata? = nil
}

/// Finding a homeserver and signing in to it: discovery, login flows, password, token and
/// access-token sign-in, sign-out.
public enum SignIn {
    /// The client URL for what a person typed: a URL is taken as it is; a server name is looked up
    /// through `/.well-known/matrix/client` (spec: server discovery), falling back to https://NAME.
    public static func discover(_ text: String, client: HTTPClient = .ferry) async throws(MatrixError) -> String {
        let trimmed = text.trimmingWhitespace()
        guard !trimmed.isEmpty else {
            // TRANSLATORS: a reason, completing "The homeserver {server} cannot be reached: {reason}."
            throw MatrixError(kind: .malformed, message: tr("no homeserver given"))
        }
        if trimmed.contains("://") { return try HomeserverAddress.checked(trimmed) }
        let origin = "https://" + trimmed
        if let found = try? await MatrixHTTP(baseURL: origin, client: client)
            .call(.GET, "/.well-known/matrix/client", timeout: .seconds(10), as: WellKnown.self)
        {
            return try homeserver(named: found, by: trimmed)
        }
        return origin
    }

    /// `/.well-known/matrix/client`: only the homeserver's base URL is read.
    package struct WellKnown: Decodable {
        struct Homeserver: Decodable { var base_url: String }
        var homeserver: Homeserver
        enum CodingKeys: String, CodingKey { case homeserver = "m.homeserver" }
    }

    /// The address a `.well-known` names, which must pass the same check as a typed one: https, or
    /// loopback (spec: FAIL_ERROR).
    package static func homeserver(named found: WellKnown, by name: String) throws(MatrixError) -> String {
        do { return try HomeserverAddress.checked(found.homeserver.base_url) } catch {
            throw MatrixError(
                kind: .refused,
                message: tr(
                    // TRANSLATORS: a reason, completing "The homeserver {server} cannot be reached: {reason}."; {name}
                    // is the server's name, ".well-known" the file on it that names its address, and {reason} why that
                    // address is not used.
                    "{name}'s .well-known points to an address Ferry does not use: {reason}",
                    ["name": name, "reason": error.message]))
        }
    }

    public static func flows(_ http: MatrixHTTP) async throws(MatrixError) -> LoginFlows {
        struct Answer: Decodable {
            struct Flow: Decodable { var type: String }
            var flows: [Flow]
        }
        // Both asked at once: the sign-in page asks after each pause in typing.
        async let metadata = outcome { () async throws(MatrixError) in try await authMetadata(http) }
        let login = await outcome { () async throws(MatrixError) in
            try await http.call(.GET, "/_matrix/client/v3/login", timeout: .seconds(15), as: Answer.self)
        }
        // Metadata Ferry does not use is said when signing in (SignInFlow); here it is no offer.
        let oauth = (try? await metadata.get()) ?? nil
        let types: Set<String>
        do throws(MatrixError) {
            types = Set(try login.get().flows.map(\.type))
        } catch  where oauth != nil && error.status == 404 {
            // A homeserver that leaves all sign-in to its authorization server serves no /login
            // (Synapse with the Matrix Authentication Service).
            types = []
        }
        return LoginFlows(
            homeserver: http.baseURL, password: types.contains("m.login.password"),
            sso: types.contains("m.login.sso") || oauth != nil, token: types.contains("m.login.token"), oauth: oauth)
    }

    /// What `body` returned or threw, as a value (for requests made side by side).
    private static func outcome<Value: Sendable>(
        _ body: () async throws(MatrixError) -> Value
    ) async -> Result<Value, MatrixError> {
        do throws(MatrixError) { return .success(try await body()) } catch { return .failure(error) }
    }

    /// `m.login.password`. `deviceID` keeps Ferry's device across sign-ins: transaction ids are
    /// remembered per device (MSC3970), so a retry after signing in again cannot double a message.
    public static func password(
        _ http: MatrixHTTP, user: String, password: String,
        deviceID: String?
    ) async throws(MatrixError) -> Session {
        try await login(
            http,
            LoginBody(
                type: "m.login.password", identifier: .init(user: user), password: password,
                device_id: deviceID))
    }

    /// `m.login.token`: the single-use token an SSO redirect hands back.
    public static func loginToken(
        _ http: MatrixHTTP, token: String, deviceID: String?
    ) async throws(MatrixError) -> Session {
        try await login(http, LoginBody(type: "m.login.token", token: token, device_id: deviceID))
    }

    /// An access token a person already has, checked with `/account/whoami`.
    public static func accessToken(_ http: MatrixHTTP, token: String) async throws(MatrixError) -> Session {
        struct WhoAmI: Decodable { var user_id: String; var device_id: String? }
        let who = try await http.with(accessToken: token).call(
            .GET, "/_matrix/client/v3/account/whoami", as: WhoAmI.self)
        return Session(userID: who.user_id, homeserver: http.baseURL, deviceID: who.device_id ?? "", accessToken: token)
    }

    /// Ends the session on the server; the token is useless afterwards.
    public static func logout(_ http: MatrixHTTP) async throws(MatrixError) {
        let _: Empty = try await http.call(.POST, "/_matrix/client/v3/logout", json: Empty(), timeout: .seconds(10))
    }

    /// Where the browser goes for SSO; the server sends it back to `redirect` with `loginToken`.
    public static func ssoURL(_ http: MatrixHTTP, redirect: String) -> String {
        http.baseURL + "/_matrix/client/v3/login/sso/redirect" + MatrixHTTP.queryString([("redirectUrl", redirect)])
    }

    private struct LoginBody: Encodable {
        struct Identifier: Encodable {
            var type = "m.id.user"
            var user: String
        }
        var type: String
        var identifier: Identifier?
        var password: String?
        var token: String?
        var device_id: String?
        var initial_device_display_name = "Ferry"
        /// Where the server lets tokens expire, it gives a refresh token to renew them (Matrix 1.3).
        var refresh_token = true
    }

    private static func login(_ http: MatrixHTTP, _ body: LoginBody) async throws(MatrixError) -> Session {
        struct Answer: Decodable {
            var user_id: String
            var access_token: String
            var device_id: String
            var refresh_token: String?
            var expires_in_ms: LenientNumber?
            var well_known: WellKnownHint?
            struct WellKnownHint: Decodable {
                var homeserver: Base?
                struct Base: Decodable { var base_url: String }
                enum CodingKeys: String, CodingKey { case homeserver = "m.homeserver" }
            }
        }
        let answer = try await http.call(.POST, "/_matrix/client/v3/login", json: body, as: Answer.self)
        let tokens = Tokens.Pair(
            access: answer.access_token, refresh: answer.refresh_token,
            expiresInMilliseconds: answer.expires_in_ms.flatMap(Tokens.milliseconds))
        return Session(
            userID: answer.user_id, homeserver: http.baseURL, deviceID: answer.device_id, tokens: Tokens(tokens))
    }
}
