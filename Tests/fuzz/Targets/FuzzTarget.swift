import FerryAccount
import FerryCore
import FerryContract
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

    /// A fixed clock, so the same input always takes the same path.
    static let now = Date(timeIntervalSince1970: 1_795_000_000)

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
        }
    }
}
