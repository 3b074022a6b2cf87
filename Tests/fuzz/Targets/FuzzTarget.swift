import FerryAccount
import FerryCore
import FerryContract
import FerryCrypto
import FerryIntake
import FerryMatrix
import Foundation
import GLibAdapter
import NIOHTTP1

/// Every parser that takes input from outside Ferry, as a function of bytes: what libFuzzer drives
/// (`make fuzz`) and what the committed corpus replays in the unit tests. A target never checks
/// what the parser answers — only that it answers: no trap, no crash, no hang, no unbounded memory.
public enum FuzzTarget: String, CaseIterable, Sendable {
    /// A `ferry:` URI (any web page can open one), through the whole share plan.
    case ferryURI = "ferry-uri"
    /// Share1's `a{sv}` as GVariant bytes, through the request decoder and the share codec.
    case shareDictionary = "share-dictionary"
    /// The request line and Host of the browser sign-in's loopback redirect.
    case ssoRedirect = "sso-redirect"
    /// The head of a staged image, read for its width and height.
    case imageSize = "image-size"
    /// A homeserver's error answer: status, `Retry-After`, then the JSON body.
    case serverError = "server-error"
    /// A server's `/.well-known/matrix/client`.
    case wellKnown = "well-known"
    /// A `Retry-After` header alone, and the lenient numbers of JSON answers.
    case retryAfter = "retry-after"
    /// An Olm message from another device: first byte its type (0 pre-key, 1 normal), the rest
    /// its body, through session set-up and decryption.
    case olmMessage = "olm-message"
    /// A Megolm room key, then (after a NUL) a Megolm message, as base64 of the raw bytes.
    case megolmMessage = "megolm-message"
    /// JSON that a signature is checked over: read as a value, written as canonical JSON.
    case canonicalJSON = "canonical-json"

    /// A fixed clock, so the same input always takes the same path.
    static let now = Date(timeIntervalSince1970: 1_795_000_000)

    /// One account and one session made once, so that a message reaches the MAC check (their
    /// keys are random, so no fuzzed message authenticates: the parsing is what is driven).
    nonisolated(unsafe) static var olm: (account: OlmAccount, session: OlmSession) = {
        let account = OlmAccount()
        var other = OlmAccount()
        other.generateOneTimeKeys(1)
        let key = other.unpublishedKeys(userID: "@f:x", deviceID: "F").oneTimeKeys.values.first!["key"]!.stringValue!
        return (account, try! OlmSession.outbound(from: account, theirIdentityKey: other.curve25519, theirOneTimeKey: key))
    }()

    public func run(_ bytes: [UInt8]) {
        switch self {
        case .ferryURI:
            let uri = String(decoding: bytes, as: UTF8.self)
            _ = try? SharePlan(request: ShareRequest(uris: [uri], source: .uri), limits: Limits())
            _ = try? FerryLink(parsing: uri)
        case .shareDictionary:
            let dictionary = Variant.dictionary(serialized: bytes)
            _ = try? ShareRequestDecoding.decode(dictionary, source: .share)
            _ = ShareCodec.decode(dictionary)
        case .ssoRedirect:
            // The request's target, then a NUL, then its Host header.
            let parts = bytes.split(separator: 0, maxSplits: 1, omittingEmptySubsequences: false)
            let expected = SSORedirect.Expected(host: "127.0.0.1:40000", path: "/sso-0123456789abcdef", state: "fedcba9876543210")
            _ = expected.loginToken(uri: String(decoding: parts[0], as: UTF8.self),
                                    host: parts.count > 1 ? String(decoding: parts[1], as: UTF8.self) : nil)
        case .imageSize:
            _ = ImageSize.of(bytes)
        case .serverError:
            // First byte: the status; up to the first newline: Retry-After; the rest: the body.
            guard let first = bytes.first else { return }
            let statuses = [429, 500, 401, 403, 413, 400, 404, 502]
            let rest = bytes.dropFirst()
            let newline = rest.firstIndex(of: 10) ?? rest.endIndex
            var headers = HTTPHeaders()
            headers.add(name: "Retry-After", value: String(decoding: rest[..<newline], as: UTF8.self))
            let body = Data(rest[newline...].dropFirst())
            _ = MatrixHTTP.decodeError(status: statuses[Int(first) % statuses.count], body: body, headers: headers, now: Self.now)
        case .wellKnown:
            guard let found = try? JSONDecoder().decode(SignIn.WellKnown.self, from: Data(bytes)) else { return }
            _ = try? SignIn.homeserver(named: found, by: "example.org")
        case .retryAfter:
            let text = String(decoding: bytes, as: UTF8.self)
            _ = MatrixHTTP.retryDelay(header: text, now: Self.now)
            _ = try? JSONDecoder().decode([LenientNumber].self, from: Data(bytes))
        case .olmMessage:
            guard let type = bytes.first else { return }
            let body = UnpaddedBase64.encode(bytes.dropFirst())
            var account = Self.olm.account
            _ = try? OlmSession.inbound(to: &account, theirIdentityKey: Self.olm.account.curve25519, preKeyMessage: body)
            var session = Self.olm.session
            _ = try? session.decrypt(type: Int(type % 3), body: body)
        case .megolmMessage:
            let parts = bytes.split(separator: 0, maxSplits: 1, omittingEmptySubsequences: false)
            guard let session = try? InboundGroupSession(sessionKey: UnpaddedBase64.encode(parts[0])) else { return }
            _ = try? session.decrypt(UnpaddedBase64.encode(parts.count > 1 ? parts[1] : []))
            _ = session.export(at: UInt32(bytes.count))
        case .canonicalJSON:
            guard let value = try? JSONDecoder().decode(JSONValue.self, from: Data(bytes)) else { return }
            _ = CanonicalJSON.encode(value)
        }
    }
}
