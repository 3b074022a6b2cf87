import FerryAccount
import FerryCore
import FerryContract
import FerryCrypto
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
    /// A key verification message from another device: first byte its type (start, accept, key,
    /// mac, done, cancel, request, ready), the rest its content as JSON, taken by a verification
    /// in each phase that can read one.
    case sasMessage = "sas-message"

    /// A fixed clock, so the same input always takes the same path.
    static let now = Date(timeIntervalSince1970: 1_795_000_000)

    /// One account and one session made once, so that a message reaches the MAC check (their
    /// keys are random, so no fuzzed message authenticates: the parsing is what is driven).
    nonisolated(unsafe) static var olm: (account: OlmAccount, session: OlmSession) = {
        let account = OlmAccount()
        var other = OlmAccount()
        other.generateOneTimeKeys(1)
        let key = other.unpublishedKeys(userID: "@f:x", deviceID: "F").oneTimeKeys.values.first!["key"]!.stringValue!
        return (
            account, try! OlmSession.outbound(from: account, theirIdentityKey: other.curve25519, theirOneTimeKey: key)
        )
    }()

    /// SAS verifications of transaction "t" made once: one waiting for an accept, one for a key,
    /// one with the keys exchanged (so that a MAC is checked against a real secret).
    nonisolated(unsafe) static var sas: [SasVerification] = {
        let ana = SasParty(userID: "@a:x", deviceID: "A", ed25519: OlmAccount().ed25519)
        let ben = SasParty(userID: "@b:x", deviceID: "B", ed25519: OlmAccount().ed25519)
        var (starting, start) = SasVerification.start(transactionID: "t", us: ana, them: ben)
        var (accepting, accept) = try! SasVerification.accept(start.content, sender: ana.userID, us: ben, them: ana)
        let waiting = [starting, accepting]
        let key = try! starting.receive(type: accept.type, content: accept.content, sender: ben.userID)[0]
        let theirKey = try! accepting.receive(type: key.type, content: key.content, sender: ana.userID)[0]
        _ = try! starting.receive(type: theirKey.type, content: theirKey.content, sender: ben.userID)
        return waiting + [starting]
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
            let expected = LoopbackRedirect.Expected(
                host: "127.0.0.1:40000", path: "/sso-0123456789abcdef", state: "fedcba9876543210")
            _ = expected.loginToken(
                uri: String(decoding: parts[0], as: UTF8.self),
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
            _ = MatrixHTTP.decodeError(
                status: statuses[Int(first) % statuses.count], body: body, headers: headers, now: Self.now)
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
            _ = try? OlmSession.inbound(
                to: &account, theirIdentityKey: Self.olm.account.curve25519, preKeyMessage: body)
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
        case .sasMessage:
            guard let first = bytes.first,
                let content = try? JSONDecoder().decode(JSONValue.self, from: Data(bytes.dropFirst()))
            else {
                return
            }
            let types = [
                VerificationMessage.start, VerificationMessage.accept, VerificationMessage.key, VerificationMessage.mac,
                VerificationMessage.done, VerificationMessage.cancel, VerificationMessage.request,
                VerificationMessage.ready,
            ]
            let type = types[Int(first) % types.count]
            _ = VerificationCancel(reading: content)
            _ = VerificationRequest(reading: content, now: Self.now)
            _ = VerificationRequest(readingReady: content)
            _ = try? SasVerification.accept(content, sender: "@a:x", us: Self.sas[1].us, them: Self.sas[1].them)
            for var verification in Self.sas {
                _ = try? verification.receive(type: type, content: content, sender: verification.them.userID)
                _ = verification.confirm()
            }
        }
    }
}
