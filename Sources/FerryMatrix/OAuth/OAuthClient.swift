import AsyncHTTPClient
import FerryCore
import Foundation

/// Ferry as a client of one authorization server: the id it was given at its registration
/// (RFC 7591), and the loopback redirect it registered. Made anew for each sign-in, as Matrix
/// 1.15 requires ("a new client registration at the start of each authorization flow"): a server
/// may delete a registration without a session, and one kept from before would then never
/// come back from the browser. The sign-in keeps its client id (`OAuthGrant`).
public struct OAuthClient: Sendable, Equatable, Codable {
    public var issuer: String
    public var clientID: String
    /// The redirect's path, made at random once per registration. Any program on this computer
    /// can send a request to a loopback port; a path it cannot know keeps it from even reaching
    /// the check of `state` (RFC 8252 §8.10). A native client's loopback redirect may use any
    /// port (RFC 8252 §7.3), so the path is the registered part.
    public var redirectPath: String

    enum CodingKeys: String, CodingKey {
        case issuer, clientID = "client_id", redirectPath = "redirect_path"
    }

    /// The redirect URI with the port a listener has now.
    public func redirect(port: Int) -> String { "http://127.0.0.1:\(port)" + redirectPath }

    public init(issuer: String, clientID: String, redirectPath: String) {
        self.issuer = issuer
        self.clientID = clientID
        self.redirectPath = redirectPath
    }

    /// What Ferry says about itself when it registers: a public native client (no secret, RFC
    /// 8252), with the code and refresh grants.
    struct Registration: Encodable {
        var client_name = "Ferry"
        var client_uri = "https://github.com/ferryshare/ferry"
        var application_type = "native"
        var token_endpoint_auth_method = "none"
        var grant_types = ["authorization_code", "refresh_token"]
        var response_types = ["code"]
        var redirect_uris: [String]
    }

    /// Registers Ferry at `metadata`'s registration endpoint.
    public static func register(
        _ metadata: AuthMetadata, client: HTTPClient = .ferry
    ) async throws(MatrixError) -> OAuthClient {
        struct Answer: Decodable {
            var client_id: String?
            var redirect_uris: [String]?
        }
        let redirectPath = "/ferry-oauth/" + Random.hex()
        let body = Registration(redirect_uris: ["http://127.0.0.1" + redirectPath])
        let answer = try await MatrixHTTP(exactly: metadata.registrationEndpoint, client: client)
            .call(.POST, "", json: body, timeout: .seconds(30), as: Answer.self)
        guard let clientID = answer.client_id, !clientID.isEmpty, clientID.utf8.count <= 1024 else {
            throw AuthMetadata.refusal(
                // TRANSLATORS: a reason, completing "The sign-in service of {server} cannot be used: {reason}."
                tr("it registered Ferry without giving it a client id"))
        }
        // A server may change what it registered; a redirect other than Ferry's own would send
        // the browser (and the code) somewhere else.
        if let registered = answer.redirect_uris, registered != body.redirect_uris {
            throw AuthMetadata.refusal(
                // TRANSLATORS: a reason, completing "The sign-in service of {server} cannot be used: {reason}."
                tr("it registered Ferry with another address to return to than the one Ferry asked for"))
        }
        return OAuthClient(issuer: metadata.issuer, clientID: clientID, redirectPath: redirectPath)
    }
}

/// Random values for the sign-in, from the system's generator.
package enum Random {
    /// `bytes` random bytes as lowercase hex.
    package static func hex(bytes: Int = 16) -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<bytes).map { _ in
            let byte = UInt8.random(in: 0...255, using: &generator)
            return String(byte >> 4, radix: 16) + String(byte & 0xF, radix: 16)
        }.joined()
    }

    /// `count` random characters of `[A-Za-z0-9]`.
    package static func alphanumeric(_ count: Int) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
        var generator = SystemRandomNumberGenerator()
        return String((0..<count).map { _ in alphabet.randomElement(using: &generator)! })
    }
}
