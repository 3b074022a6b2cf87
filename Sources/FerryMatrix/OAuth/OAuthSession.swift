import FerryCore
import Foundation

extension SignIn {
    /// The session of tokens an OAuth sign-in gave: who they are for, asked with `whoami`. The
    /// device must be the one Ferry asked for in the scope: a server that put the sign-in on
    /// another device would have Ferry's encryption keys published under a device it does not hold.
    public static func session(
        _ http: MatrixHTTP, oauth pair: Tokens.Pair, deviceID: String
    ) async throws(MatrixError) -> Session {
        struct WhoAmI: Decodable { var user_id: String; var device_id: String? }
        let tokens = Tokens(pair)
        let probe = Session(userID: "", homeserver: http.baseURL, deviceID: deviceID, tokens: tokens)
        let who = try await MatrixHTTP(session: probe).call(.GET, "/_matrix/client/v3/account/whoami", as: WhoAmI.self)
        guard who.device_id == deviceID else {
            throw AuthMetadata.refusal(
                // TRANSLATORS: a reason, completing "The sign-in service of {server} cannot be used: {reason}."
                tr("it signed Ferry in on another device than the one it asked for"))
        }
        return Session(userID: who.user_id, homeserver: http.baseURL, deviceID: deviceID, tokens: tokens)
    }

    /// Ends a sign-in at the server: an OAuth one at its authorization server (RFC 7009), any
    /// other with `/logout`.
    public static func end(_ session: Session) async throws(MatrixError) {
        let pair = session.tokens.pair
        if let grant = pair.oauth {
            // Renewed once more first, with nothing else renewing it (Tokens.forEnding).
            try await grant.revoke(await session.tokens.forEnding(through: MatrixHTTP(session: session)))
        } else {
            try await logout(MatrixHTTP(session: session))
        }
    }
}
