@testable import FerryMatrix
import Foundation
import NIOConcurrencyHelpers
import XCTest

/// The OAuth 2.0 API's pieces on plain values: which metadata is used, what the authorization
/// request carries, which answers are taken, and the renewal at the token endpoint. The flow
/// against a real authorization server and Synapse is in Tests/integration/service/test_oauth.py.
final class OAuthTests: XCTestCase {
    static var document: [String: Any] {
        [
            "issuer": "https://auth.example.org/",
            "authorization_endpoint": "https://auth.example.org/authorize",
            "token_endpoint": "https://auth.example.org/oauth2/token",
            "registration_endpoint": "https://auth.example.org/oauth2/registration",
            "revocation_endpoint": "https://auth.example.org/oauth2/revoke",
            "account_management_uri": "https://auth.example.org/account/",
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "code_challenge_methods_supported": ["S256"],
            "prompt_values_supported": ["create"],
            "authorization_response_iss_parameter_supported": true,
        ]
    }

    static func metadata(
        _ changes: [String: Any?] = [:], homeserver: String = "https://matrix.example.org"
    ) throws(MatrixError) -> AuthMetadata {
        var document = Self.document
        for (key, value) in changes { document[key] = value }
        let data = try! JSONSerialization.data(withJSONObject: document)
        return try AuthMetadata.checked(
            try! JSONDecoder().decode(AuthMetadata.Document.self, from: data), homeserver: homeserver)
    }

    func testMetadataAsMatrixServersServeItIsUsed() throws {
        let metadata = try Self.metadata()
        XCTAssertEqual(metadata.issuer, "https://auth.example.org/")
        XCTAssertEqual(metadata.tokenEndpoint, "https://auth.example.org/oauth2/token")
        XCTAssertTrue(metadata.offersAccountCreation)
        XCTAssertEqual(metadata.accountManagementURI, "https://auth.example.org/account/")
        // Loopback http is this computer: tests, and a homeserver on the same machine.
        let local = [
            "issuer": "http://127.0.0.1:8080/", "authorization_endpoint": "http://127.0.0.1:8080/authorize",
            "token_endpoint": "http://127.0.0.1:8080/token", "registration_endpoint": "http://127.0.0.1:8080/register",
            "revocation_endpoint": "http://127.0.0.1:8080/revoke",
        ]
        XCTAssertNoThrow(try Self.metadata(local, homeserver: "http://127.0.0.1:8008"))
        // ... and never for a homeserver elsewhere, which could make Ferry post to a local service.
        XCTAssertThrowsError(try Self.metadata(local))
    }

    func testMetadataThatWouldSendAnythingOverPlainHttpOrIsIncompleteIsRefused() {
        let hostile: [(String, [String: Any?])] = [
            ("http issuer off loopback", ["issuer": "http://auth.example.org/"]),
            ("authorization on a non-loopback http host", ["authorization_endpoint": "http://evil.example/authorize"]),
            ("authorization over loopback http", ["authorization_endpoint": "http://127.0.0.1/authorize"]),
            ("token endpoint over http", ["token_endpoint": "http://auth.example.org/token"]),
            ("registration over http", ["registration_endpoint": "http://10.0.0.1/register"]),
            ("revocation over http", ["revocation_endpoint": "http://auth.example.org/revoke"]),
            ("issuer with a query", ["issuer": "https://auth.example.org/?tenant=x"]),
            ("not a URL", ["token_endpoint": "javascript:alert(1)"]),
            ("no issuer", ["issuer": nil]),
            ("no registration", ["registration_endpoint": nil]),
            ("no revocation", ["revocation_endpoint": nil]),
            ("token endpoint on another server", ["token_endpoint": "https://evil.example/token"]),
            ("registration on another port", ["registration_endpoint": "https://auth.example.org:8443/register"]),
            ("revocation elsewhere", ["revocation_endpoint": "https://matrix.example.org/revoke"]),
            ("no query answers", ["response_modes_supported": ["fragment"]]),
            ("loopback token endpoint", ["token_endpoint": "http://127.0.0.1:2375/images/create?fromImage=x"]),
            // The real sign-in page, with an issuer and token endpoint of the homeserver's own:
            // the code and its verifier would go to it, and no `iss` would tell.
            (
                "issuer and token endpoint elsewhere",
                [
                    "issuer": "https://evil.example/", "token_endpoint": "https://evil.example/token",
                    "registration_endpoint": "https://evil.example/register",
                    "authorization_response_iss_parameter_supported": nil,
                ]
            ),
            ("no PKCE", ["code_challenge_methods_supported": ["plain"]]),
            ("no refresh", ["grant_types_supported": ["authorization_code"]]),
            ("no code flow", ["response_types_supported": ["token"]]),
        ]
        for (what, changes) in hostile {
            XCTAssertThrowsError(try Self.metadata(changes), what) { error in
                XCTAssertEqual((error as? MatrixError)?.errcode, AuthMetadata.refusalErrcode, what)
            }
        }
        // The account page is only opened, never sent anything: a bad one is left out, not fatal.
        XCTAssertNil(try Self.metadata(["account_management_uri": "http://evil.example/"]).accountManagementURI)
    }

    func testOriginsAreComparedAsServersNotAsText() throws {
        XCTAssertEqual(
            AuthMetadata.origin("https://Auth.Example.org/x"), AuthMetadata.origin("https://auth.example.org:443/y"))
        XCTAssertNotEqual(
            AuthMetadata.origin("https://auth.example.org/"), AuthMetadata.origin("http://auth.example.org/"))
        XCTAssertEqual(AuthMetadata.origin("https://[::1]:8448/a"), "https://[::1]:8448")
        XCTAssertNoThrow(
            try Self.metadata(["token_endpoint": "https://AUTH.example.org:443/oauth2/token"]), "the same server")
    }

    func testDiscoveryTriesTheOtherPathAndTakesAPageThatIsNotJSONForNoOffer() async throws {
        let document = try JSONSerialization.data(withJSONObject: Self.document)
        func http(_ answers: [String: (Int, Data)]) -> MatrixHTTP {
            MatrixHTTP(
                baseURL: "https://matrix.example.org",
                responder: { exchange in
                    answers[exchange.path] ?? (404, Data(#"{"errcode":"M_UNRECOGNIZED"}"#.utf8))
                })
        }
        let stable = "/_matrix/client/v1/auth_metadata"
        let unstable = "/_matrix/client/unstable/org.matrix.msc2965/auth_metadata"
        let down = (503, Data("{}".utf8))
        let found = try await SignIn.authMetadata(http([stable: down, unstable: (200, document)]))
        XCTAssertEqual(found?.issuer, "https://auth.example.org/")
        let page = (200, Data("<html>welcome</html>".utf8))
        let none = try await SignIn.authMetadata(http([stable: page, unstable: page]))
        XCTAssertNil(none)
        do {
            _ = try await SignIn.authMetadata(http([stable: down, unstable: down]))
            XCTFail("a server answering neither path was taken for no offer")
        } catch {
            XCTAssertEqual(error.status, 503)
        }
        // JSON with a field of the wrong type is the server's word, and refused, not skipped.
        var odd = Self.document
        odd["issuer"] = 42
        let oddData = try JSONSerialization.data(withJSONObject: odd)
        do {
            _ = try await SignIn.authMetadata(http([stable: (200, oddData)]))
            XCTFail("metadata with a number for its issuer was used or skipped")
        } catch {
            XCTAssertEqual(error.errcode, AuthMetadata.refusalErrcode)
        }
    }

    func testEndingRenewsOnceWithNothingElseRenewingAndKeepsNothing() async throws {
        var pair = Tokens.Pair(access: "access-1", refresh: "refresh-1")
        pair.oauth = OAuthGrant(
            metadata: try Self.metadata(), client: OAuthClient(issuer: "i", clientID: "c", redirectPath: "/p"))
        let tokens = Tokens(pair)
        let kept = NIOLockedValueBox(0)
        tokens.whenRenewed { _ in
            kept.withLockedValue { $0 += 1 }
            return true
        }
        let renewals = NIOLockedValueBox(0)
        let http = MatrixHTTP(
            session: Session(userID: "@a:x", homeserver: "https://matrix.example.org", deviceID: "D", tokens: tokens),
            responder: { _ in
                let n = renewals.withLockedValue {
                    $0 += 1
                    return $0 + 1
                }
                return (
                    200,
                    Data(#"{"access_token":"access-\#(n)","refresh_token":"refresh-\#(n)","token_type":"Bearer"}"#.utf8)
                )
            })

        let last = await tokens.forEnding(through: http)

        XCTAssertEqual(last.refresh, "refresh-2")
        XCTAssertEqual(kept.withLockedValue { $0 }, 0, "a pair about to be revoked was kept")
        // Nothing renews it any more: a request refused for its token is not renewed.
        let renewed = try await tokens.renew(replacing: "access-2", through: http)
        XCTAssertFalse(renewed)
        XCTAssertEqual(renewals.withLockedValue { $0 }, 1)
    }

    func testPKCEIsRFC7636sS256() {
        // RFC 7636, appendix B.
        XCTAssertEqual(
            Authorization.challenge(of: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
    }

    func testTheAuthorizationRequestCarriesTheDeviceStateAndChallenge() throws {
        let metadata = try Self.metadata()
        let client = OAuthClient(issuer: metadata.issuer, clientID: "client 1", redirectPath: "/ferry-oauth/abc")
        let authorization = Authorization(
            metadata: metadata, client: client, deviceID: nil, port: 4321, state: Authorization.newState())
        let url = try XCTUnwrap(URLComponents(string: authorization.url(createAccount: false)))
        let query = Dictionary(uniqueKeysWithValues: (url.queryItems ?? []).map { ($0.name, $0.value ?? "") })

        XCTAssertEqual(url.path, "/authorize")
        XCTAssertEqual(query["client_id"], "client 1")
        XCTAssertEqual(query["redirect_uri"], "http://127.0.0.1:4321/ferry-oauth/abc")
        XCTAssertEqual(query["state"], authorization.state)
        XCTAssertEqual(query["code_challenge_method"], "S256")
        XCTAssertEqual(query["code_challenge"], Authorization.challenge(of: authorization.verifier))
        XCTAssertNotEqual(authorization.verifier, authorization.state)
        XCTAssertEqual(query["scope"], "urn:matrix:client:api:* urn:matrix:client:device:\(authorization.deviceID)")
        XCTAssertTrue(Authorization.isDeviceID(authorization.deviceID))
        XCTAssertNil(query["prompt"])

        let create = try XCTUnwrap(URLComponents(string: authorization.url(createAccount: true)))
        XCTAssertTrue(create.queryItems?.contains(URLQueryItem(name: "prompt", value: "create")) == true)
        // A server that cannot open at "create an account" gets its plain sign-in page.
        let plain = Authorization(
            metadata: try Self.metadata(["prompt_values_supported": nil]), client: client, deviceID: nil, port: 1,
            state: "s")
        XCTAssertFalse(plain.url(createAccount: true).contains("prompt="))
    }

    func testAKeptDeviceIsAskedForAgainAndAnOddOneIsNot() throws {
        let metadata = try Self.metadata()
        let client = OAuthClient(issuer: metadata.issuer, clientID: "c", redirectPath: "/p")
        XCTAssertEqual(
            Authorization(metadata: metadata, client: client, deviceID: "ABCDEFGHIJ", port: 1, state: "s").deviceID,
            "ABCDEFGHIJ")
        for odd in ["SHORT", "has space12", "a/b/c/d/e/f"] {
            let made = Authorization(metadata: metadata, client: client, deviceID: odd, port: 1, state: "s")
            XCTAssertNotEqual(made.deviceID, odd)
            XCTAssertTrue(Authorization.isDeviceID(made.deviceID))
        }
    }

    func testAnAnswerFromAnotherIssuerOrWithoutOneIsNeverExchanged() async throws {
        // Nothing listens on port 9 here: reaching the token endpoint would be a transport error.
        let metadata = try Self.metadata(
            Self.document.compactMapValues { $0 as? String }.mapValues {
                $0.replacingOccurrences(of: "https://auth.example.org/", with: "https://auth.example.org:9/")
            })
        let client = OAuthClient(issuer: metadata.issuer, clientID: "c", redirectPath: "/p")
        let authorization = Authorization(metadata: metadata, client: client, deviceID: nil, port: 1, state: "s")
        for issuer in ["https://evil.example/", nil] {
            do {
                _ = try await authorization.tokens(for: "code", issuer: issuer)
                XCTFail("exchanged the answer of \(issuer ?? "no issuer")")
            } catch {
                XCTAssertEqual(error.errcode, AuthMetadata.refusalErrcode, "\(issuer ?? "no issuer")")
            }
        }
    }

    func testAnOAuthSignInIsRenewedAtItsTokenEndpointAndKeptWithWhereToRenewIt() async throws {
        let grant = OAuthGrant(
            metadata: try Self.metadata(),
            client: OAuthClient(issuer: "i", clientID: "ferry-client", redirectPath: "/p"))
        var pair = Tokens.Pair(access: "access-1", refresh: "refresh-1", expiresInMilliseconds: 300_000)
        pair.oauth = grant
        let read = try XCTUnwrap(Tokens.fromKept(Tokens.kept(pair)))
        XCTAssertEqual(read.oauth, grant)
        XCTAssertEqual(read.refresh, "refresh-1")

        let forms = NIOLockedValueBox<[String]>([])
        let tokens = Tokens(read)
        let http = MatrixHTTP(
            session: Session(userID: "@a:x", homeserver: "http://127.0.0.1:1", deviceID: "D", tokens: tokens),
            responder: { exchange in
                if exchange.address == "https://auth.example.org/oauth2/token" {
                    forms.withLockedValue { $0.append(String(decoding: exchange.body ?? Data(), as: UTF8.self)) }
                    let answer =
                        #"{"access_token":"access-2","refresh_token":"refresh-2","#
                        + #""expires_in":300,"token_type":"Bearer"}"#
                    return (200, Data(answer.utf8))
                }
                guard exchange.bearer == "access-2" else {
                    return (401, Data(#"{"errcode":"M_UNKNOWN_TOKEN","error":"expired","soft_logout":true}"#.utf8))
                }
                return (200, Data(#"{"user_id":"@a:x"}"#.utf8))
            })
        struct WhoAmI: Decodable { var user_id: String }
        _ = try await http.call(.GET, "/whoami", as: WhoAmI.self)

        XCTAssertEqual(
            forms.withLockedValue { $0 }, ["grant_type=refresh_token&refresh_token=refresh-1&client_id=ferry-client"])
        XCTAssertEqual(tokens.pair.access, "access-2")
        XCTAssertEqual(tokens.pair.refresh, "refresh-2")
        XCTAssertEqual(tokens.pair.lifetimeMilliseconds, 300_000)
        XCTAssertEqual(tokens.pair.oauth, grant)
    }

    func testARefreshTheAuthorizationServerRefusesSignsOut() async throws {
        var pair = Tokens.Pair(access: "access-1", refresh: "refresh-1")
        pair.oauth = OAuthGrant(
            metadata: try Self.metadata(), client: OAuthClient(issuer: "i", clientID: "c", redirectPath: "/p"))
        let http = MatrixHTTP(
            session: Session(userID: "@a:x", homeserver: "http://127.0.0.1:1", deviceID: "D", tokens: Tokens(pair)),
            responder: { exchange in
                if exchange.path.isEmpty {
                    return (400, Data(#"{"error":"invalid_grant","error_description":"refresh token revoked"}"#.utf8))
                }
                return (401, Data(#"{"errcode":"M_UNKNOWN_TOKEN","error":"expired","soft_logout":true}"#.utf8))
            })
        struct WhoAmI: Decodable { var user_id: String }
        do {
            _ = try await http.call(.GET, "/whoami", as: WhoAmI.self)
            XCTFail("answered")
        } catch {
            XCTAssertTrue(error.isUnknownToken, "\(error)")
            XCTAssertTrue(error.message.contains("refresh token revoked"), error.message)
        }
    }

    func testAnOAuthErrorKeepsItsCodeAndDescription() {
        let error = MatrixHTTP.decodeError(
            status: 400, body: Data(#"{"error":"invalid_client","error_description":"unknown client"}"#.utf8),
            headers: [:])
        XCTAssertEqual(error.errcode, "invalid_client")
        XCTAssertEqual(error.message, "unknown client")
        // A Matrix error is read as before.
        let matrix = MatrixHTTP.decodeError(
            status: 403, body: Data(#"{"errcode":"M_FORBIDDEN","error":"no"}"#.utf8), headers: [:])
        XCTAssertEqual(matrix.errcode, "M_FORBIDDEN")
        XCTAssertEqual(matrix.message, "no")
    }
}
