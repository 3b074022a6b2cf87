import FerryCore
import Foundation

/// What a homeserver says about the authorization server that signs people in to it, where it
/// uses the OAuth 2.0 API (Matrix 1.15, "Server metadata discovery"; the fields are RFC 8414's).
/// Only metadata that passed `checked` is ever made: every address in it is https, or plain http
/// on this computer, and it offers what Ferry's flow needs (the code grant with PKCE S256 and
/// refresh tokens).
public struct AuthMetadata: Sendable, Equatable, Codable {
    public var issuer: String
    public var authorizationEndpoint: String
    public var tokenEndpoint: String
    public var registrationEndpoint: String
    public var revocationEndpoint: String?
    /// Where the person manages their account (sessions, password, e-mail): "Manage Account…".
    public var accountManagementURI: String?
    /// Whether the authorization page can open at "create an account" (`prompt=create`).
    public var offersAccountCreation: Bool
    /// Whether the authorization server names itself in each answer (RFC 9207 `iss`): then an
    /// answer without it is not taken.
    public var namesItselfInAnswers: Bool

    /// The document as the server wrote it.
    struct Document: Decodable {
        var issuer: String?
        var authorization_endpoint: String?
        var token_endpoint: String?
        var registration_endpoint: String?
        var revocation_endpoint: String?
        var account_management_uri: String?
        var response_types_supported: [String]?
        var grant_types_supported: [String]?
        var code_challenge_methods_supported: [String]?
        var response_modes_supported: [String]?
        var prompt_values_supported: [String]?
        var authorization_response_iss_parameter_supported: Bool?

        /// Any JSON object is a document: a field of the wrong type counts as missing, so that
        /// the checks say what is wrong (a required one) rather than the page being taken for
        /// no offer at all.
        init(from decoder: Decoder) throws {
            let fields = try decoder.container(keyedBy: CodingKeys.self)
            func text(_ key: CodingKeys) -> String? { try? fields.decodeIfPresent(String.self, forKey: key) }
            func list(_ key: CodingKeys) -> [String]? { try? fields.decodeIfPresent([String].self, forKey: key) }
            issuer = text(.issuer)
            authorization_endpoint = text(.authorization_endpoint)
            token_endpoint = text(.token_endpoint)
            registration_endpoint = text(.registration_endpoint)
            revocation_endpoint = text(.revocation_endpoint)
            account_management_uri = text(.account_management_uri)
            response_types_supported = list(.response_types_supported)
            grant_types_supported = list(.grant_types_supported)
            code_challenge_methods_supported = list(.code_challenge_methods_supported)
            response_modes_supported = list(.response_modes_supported)
            prompt_values_supported = list(.prompt_values_supported)
            authorization_response_iss_parameter_supported = try? fields.decodeIfPresent(
                Bool.self, forKey: .authorization_response_iss_parameter_supported)
        }

        enum CodingKeys: String, CodingKey {
            case issuer, authorization_endpoint, token_endpoint, registration_endpoint, revocation_endpoint
            case account_management_uri, response_types_supported, grant_types_supported
            case code_challenge_methods_supported, response_modes_supported, prompt_values_supported
            case authorization_response_iss_parameter_supported
        }
    }

    /// The metadata of a document `homeserver` served, or a `.refused` error saying what is wrong
    /// with it.
    ///
    /// Beyond each address being https (or plain http on this computer, only for a homeserver on
    /// this computer: a server elsewhere cannot make Ferry post to a local service), the
    /// endpoints that get the code, the tokens and the registration must be on the authorization
    /// server's own origin (the issuer's or the authorization page's): a homeserver naming the
    /// real sign-in page with a token endpoint of its own would otherwise receive the code and its
    /// verifier from a sign-in the person saw at the real server.
    static func checked(_ document: Document, homeserver: String) throws(MatrixError) -> AuthMetadata {
        let localHomeserver = URLComponents(string: homeserver)?.host.map(HomeserverAddress.isLoopback) ?? false
        func required(_ value: String?, _ field: String) throws(MatrixError) -> String {
            guard let value, !value.isEmpty else { throw refusal(tr("it does not name its {field}", ["field": field])) }
            return try address(value, field)
        }
        func address(_ value: String, _ field: String) throws(MatrixError) -> String {
            do throws(MatrixError) {
                try HomeserverAddress.check(value, query: field != "issuer")
                if !localHomeserver, URLComponents(string: value)?.scheme?.lowercased() != "https" {
                    throw MatrixError(
                        kind: .refused,
                        message: tr(
                            // TRANSLATORS: a reason, completing "its {field} is not an address Ferry uses: {reason}".
                            "Ferry takes plain http:// only from a homeserver on this computer"))
                }
                return value
            } catch {
                throw refusal(
                    tr(
                        // TRANSLATORS: a reason, completing "The homeserver's sign-in service cannot be used:
                        // {reason}."; {field} is the name of an address in its description (such as "token_endpoint"),
                        // {reason} why it is not used.
                        "its {field} is not an address Ferry uses: {reason}", ["field": field, "reason": error.message])
                )
            }
        }
        let metadata = AuthMetadata(
            issuer: try required(document.issuer, "issuer"),
            authorizationEndpoint: try required(document.authorization_endpoint, "authorization_endpoint"),
            tokenEndpoint: try required(document.token_endpoint, "token_endpoint"),
            registrationEndpoint: try required(document.registration_endpoint, "registration_endpoint"),
            // Required by Matrix 1.15: without it a sign-out could not end the sign-in there.
            revocationEndpoint: try required(document.revocation_endpoint, "revocation_endpoint"),
            accountManagementURI: document.account_management_uri.flatMap {
                // Only opened in the browser, never sent anything: an address that is not one is left out.
                (try? HomeserverAddress.check($0, query: true)) != nil ? $0 : nil
            },
            offersAccountCreation: document.prompt_values_supported?.contains("create") == true,
            namesItselfInAnswers: document.authorization_response_iss_parameter_supported == true)
        // RFC 8414 lets these be left out (meaning "code", and the code and implicit grants).
        guard document.response_types_supported?.contains("code") ?? true else {
            throw refusal(tr("it does not offer the authorization code flow"))
        }
        guard
            document.grant_types_supported.map({ $0.contains("authorization_code") && $0.contains("refresh_token") })
                ?? true
        else {
            throw refusal(tr("it does not offer renewing a sign-in (refresh tokens)"))
        }
        // PKCE is not optional in Matrix: S256 must be named.
        guard document.code_challenge_methods_supported?.contains("S256") == true else {
            throw refusal(tr("it does not offer PKCE with S256"))
        }
        // Ferry's listener reads the answer from the query (RFC 6749's default for the code).
        guard document.response_modes_supported?.contains("query") ?? true else {
            throw refusal(
                // TRANSLATORS: a reason, completing "The sign-in service of {server} cannot be used: {reason}.";
                // “query” is the OAuth name of that way of answering, as it is.
                tr("it cannot send the sign-in back in the address (response mode “query”)"))
        }
        // The sign-in page is what the person sees and trusts; everything else must be its server.
        let page = Self.origin(metadata.authorizationEndpoint)
        for (field, value) in [
            ("issuer", metadata.issuer), ("token_endpoint", metadata.tokenEndpoint),
            ("registration_endpoint", metadata.registrationEndpoint),
            ("revocation_endpoint", metadata.revocationEndpoint ?? metadata.tokenEndpoint),
        ] where page == nil || Self.origin(value) != page {
            throw refusal(
                tr(
                    // TRANSLATORS: a reason, completing "The sign-in service of {server} cannot be used: {reason}.";
                    // {field} is the name of an address in its description (such as "token_endpoint").
                    "its {field} is on another server than its sign-in page", ["field": field]))
        }
        return metadata
    }

    /// scheme://host:port, lowercased, the port written out.
    static func origin(_ address: String) -> String? {
        guard let components = URLComponents(string: address), let scheme = components.scheme?.lowercased(),
            let host = components.host?.lowercased()
        else { return nil }
        let port = components.port ?? (scheme == "https" ? 443 : 80)
        return "\(scheme)://\(host):\(port)"
    }

    /// The errcode of an authorization server Ferry does not use (`refusal`): never a server's own.
    public static let refusalErrcode = "IO.GITHUB.FERRYSHARE.SIGN_IN_SERVICE"

    static func refusal(_ reason: String) -> MatrixError {
        MatrixError(kind: .refused, errcode: refusalErrcode, message: reason)
    }
}

extension SignIn {
    /// The OAuth 2.0 API's metadata, where the homeserver offers it (`GET
    /// /_matrix/client/v1/auth_metadata`, or MSC2965's unstable path on servers that serve only
    /// that). Nil where it offers none (the legacy flows are then used); throws where it answered
    /// something Ferry must not use, or did not answer.
    public static func authMetadata(_ http: MatrixHTTP) async throws(MatrixError) -> AuthMetadata? {
        var failure: MatrixError?
        for path in [
            "/_matrix/client/v1/auth_metadata", "/_matrix/client/unstable/org.matrix.msc2965/auth_metadata",
        ] {
            let document: AuthMetadata.Document
            do throws(MatrixError) {
                document = try await http.call(.GET, path, timeout: .seconds(15), as: AuthMetadata.Document.self)
            } catch {
                // Not served here: 404 M_UNRECOGNIZED (Synapse without delegation too), or a page
                // that is not JSON at all (a proxy answering every path). Not answered now (the
                // network, a 5xx): the other path may answer; if neither does, that is said.
                let notServed =
                    error.kind == .malformed || (error.status.map { (400..<500).contains($0) && $0 != 429 } ?? false)
                if !notServed { failure = failure ?? error }
                continue
            }
            // A JSON answer is the server's word: metadata Ferry must not use is refused, never skipped.
            return try AuthMetadata.checked(document, homeserver: http.baseURL)
        }
        if let failure { throw failure }
        return nil
    }
}
