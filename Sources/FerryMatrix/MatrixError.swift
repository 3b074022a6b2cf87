import FerryCore

/// A failed Matrix request, sorted by what the sender should do about it.
///
/// The spec's error shape is `{"errcode": "M_…", "error": "…"}` with the HTTP status; 429 adds
/// `retry_after_ms`, and 401 `M_UNKNOWN_TOKEN` may carry `soft_logout`.
public struct MatrixError: Error, Sendable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// Nothing useful came back: connection refused or reset, DNS, TLS, a timeout.
        case transport
        /// An HTTP status with the server's error code.
        case http(status: Int)
        /// The server answered 2xx with a body that is not what the spec promises.
        case malformed
        /// Ferry refused to talk to that address at all (plain http:// to another computer, a bad
        /// `.well-known`): nothing was sent.
        case refused
        /// The access token expired during a request that cannot be repeated in place (an
        /// upload's body) and was renewed: the request goes again, at once.
        case renewed
        /// An upload took longer than the server lets an access token live (it checks the token
        /// once the body is in): sending it again over the same connection would fail the same way.
        case outlivesSignIn
    }

    public let kind: Kind
    public let errcode: String?
    public let message: String
    public let retryAfterMilliseconds: Int64?
    public let softLogout: Bool
    /// A 401 of user-interactive auth (`session` and `flows`): the session to answer it in.
    public let authSession: String?
    /// The stages of the flows such a 401 offers (`m.login.password`, `m.login.sso`, …).
    public let authFlows: Set<String>

    public init(
        kind: Kind, errcode: String? = nil, message: String, retryAfterMilliseconds: Int64? = nil,
        softLogout: Bool = false, authSession: String? = nil, authFlows: Set<String> = []
    ) {
        self.authSession = authSession
        self.authFlows = authFlows
        self.kind = kind
        self.errcode = errcode
        self.message = message
        self.retryAfterMilliseconds = retryAfterMilliseconds
        self.softLogout = softLogout
    }

    /// The errcode of a failure to encrypt on Ferry's side (never a server's): the destination
    /// fails as EncryptedRoom, and nothing is sent there unencrypted.
    public static let encryptionErrcode = "IO.GITHUB.FERRYSHARE.ENCRYPTION"

    public var status: Int? { if case .http(let status) = kind { return status }; return nil }

    /// The access token is no longer valid: the person must sign in again.
    public var isUnknownToken: Bool { status == 401 && (errcode == "M_UNKNOWN_TOKEN" || errcode == "M_MISSING_TOKEN") }

    /// Worth trying again later: the server or the network may come back, or a rate limit lifts.
    public var isTransient: Bool {
        switch kind {
        case .transport, .renewed: return true
        case .malformed, .refused, .outlivesSignIn: return false
        case .http(let status): return status == 429 || status == 408 || status >= 500
        }
    }

    public var description: String {
        switch kind {
        case .transport, .refused, .renewed, .outlivesSignIn: return message
        // TRANSLATORS: completes "Sending to {room} failed: {reason}."; {detail} says what was wrong with the
        // homeserver's answer, often in English.
        case .malformed: return tr("unexpected answer: {detail}", ["detail": message])
        case .http(let status): return "\(status) \(errcode ?? "")\(errcode == nil ? "" : ": ")\(message)"
        }
    }
}
