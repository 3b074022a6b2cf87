import FerryCore
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOConcurrencyHelpers

/// The one-time loopback address a homeserver's SSO page sends the browser back to, carrying the
/// `loginToken` (spec: client-server API, "SSO client login"). Listens on 127.0.0.1 on a port the
/// kernel picks, answers exactly one redirect with a page saying the person may close the tab, and
/// is gone afterwards (after success, failure or a timeout).
///
/// Any program on this computer can connect to a loopback port, and one that slipped in its own
/// `loginToken` would sign Ferry in to an account of its choosing. So the redirect URL carries a
/// random path and a random single-use `state` that only the homeserver's page (and so the
/// browser) learns; a request without both, or with a `Host` other than this listener, is refused
/// and its token never used.
// @unchecked Sendable: immutable; a NIO Channel and EventLoopPromise may be used from any thread
// (their operations hop to their event loop).
public final class SSORedirect: @unchecked Sendable {
    // @unchecked: every stored property is a constant; the promise is completed on its event loop.
    private let channel: Channel
    private let token: EventLoopPromise<String>
    public let url: String

    private init(channel: Channel, token: EventLoopPromise<String>, expected: Expected) {
        self.channel = channel
        self.token = token
        url = "http://\(expected.host)\(expected.path)?state=\(expected.state)"
    }

    /// What the one redirect must look like.
    package struct Expected: Sendable {
        var host: String
        var path: String
        var state: String

        package init(host: String, path: String, state: String) {
            self.host = host
            self.path = path
            self.state = state
        }

        /// The `loginToken` of a request for exactly this redirect; nil for anything else.
        package func loginToken(uri: String, host requestHost: String?) -> String? {
            guard requestHost == host, let question = uri.firstIndex(of: "?"), uri[..<question] == path else {
                return nil
            }
            var state: String?, token: String?
            for pair in uri[uri.index(after: question)...].split(separator: "&") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                guard parts.count == 2 else { continue }
                switch parts[0] {
                case "state": if state == nil { state = String(parts[1]) } else { return nil }
                case "loginToken":
                    if token == nil { token = String(parts[1]).removingPercentEncoding } else { return nil }
                default: continue
                }
            }
            guard state == self.state, let token, !token.isEmpty else { return nil }
            return token
        }
    }

    public static func listen() async throws -> SSORedirect {
        let group = MultiThreadedEventLoopGroup.singleton
        let token = group.next().makePromise(of: String.self)
        let expected = ExpectedBox()
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { child in
                child.pipeline.configureHTTPServerPipeline().flatMap {
                    child.pipeline.addHandler(CallbackHandler(token: token, expected: expected))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        let made = Expected(
            host: "127.0.0.1:\(channel.localAddress?.port ?? 0)", path: "/ferry-sso/" + randomHex(),
            state: randomHex())
        expected.set(made)
        return SSORedirect(channel: channel, token: token, expected: made)
    }

    /// 128 random bits as hex, from the system's generator.
    static func randomHex() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<2).map { _ in
            let value = generator.next() as UInt64
            let digits = String(value, radix: 16)
            return String(repeating: "0", count: 16 - digits.count) + digits
        }.joined()
    }

    /// The expectation, set once the port is known (before the URL is handed to anyone).
    final class ExpectedBox: Sendable {
        private let value = NIOLockedValueBox<Expected?>(nil)
        func set(_ expected: Expected) { value.withLockedValue { $0 = expected } }
        var current: Expected? { value.withLockedValue { $0 } }
    }

    /// Waits for the browser to come back, at most `seconds`; nil when it did not.
    public func loginToken(within seconds: Int64) async -> String? {
        let timeout = channel.eventLoop.scheduleTask(in: .seconds(seconds)) {
            self.token.fail(ChannelError.connectTimeout(.seconds(seconds)))
        }
        defer {
            timeout.cancel()
            channel.close(promise: nil)
        }
        return try? await token.futureResult.get()
    }

    public func cancel() {
        token.fail(ChannelError.alreadyClosed)
        channel.close(promise: nil)
    }

    private final class CallbackHandler: ChannelInboundHandler, @unchecked Sendable {
        // @unchecked: NIO calls a handler on its channel's event loop only; its lets are constants.
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart
        let token: EventLoopPromise<String>
        let expected: ExpectedBox

        init(token: EventLoopPromise<String>, expected: ExpectedBox) {
            self.token = token
            self.expected = expected
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            guard case .head(let head) = unwrapInboundIn(data) else { return }
            let found = expected.current?.loginToken(uri: head.uri, host: head.headers.first(name: "Host"))
            // TRANSLATORS: shown in the browser, on a page that was not opened by the homeserver's sign-in.
            let refused = tr("This address only takes a sign-in from the homeserver.")
            // TRANSLATORS: the heading of the page the browser shows once signing in to Ferry worked.
            let heading = tr("Signed in to Ferry")
            // TRANSLATORS: below "Signed in to Ferry", on the same page in the browser.
            let closeTab = tr("You can close this tab now.")
            let page =
                found == nil
                ? "<!doctype html><title>Ferry</title><p>\(Self.html(refused))"
                : "<!doctype html><title>Ferry</title><h1>\(Self.html(heading))</h1><p>\(Self.html(closeTab))"
            var headers = HTTPHeaders()
            headers.add(name: "Content-Type", value: "text/html; charset=utf-8")
            headers.add(name: "Content-Length", value: "\(page.utf8.count)")
            headers.add(name: "Connection", value: "close")
            context.write(
                wrapOutboundOut(
                    .head(
                        HTTPResponseHead(
                            version: head.version, status: found == nil ? .notFound : .ok,
                            headers: headers))), promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: page)))), promise: nil)
            // The channel, not the context: a context belongs to its event loop and is not Sendable.
            context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { [channel = context.channel] _ in
                channel.close(promise: nil)
            }
            if let found { token.succeed(found) }
        }

        /// A translation as HTML text: whatever a translator typed, it is never markup.
        private static func html(_ text: String) -> String {
            var escaped = ""
            for character in text {
                switch character {
                case "&": escaped += "&amp;"
                case "<": escaped += "&lt;"
                case ">": escaped += "&gt;"
                default: escaped.append(character)
                }
            }
            return escaped
        }

    }
}

extension String {
    fileprivate var removingPercentEncoding: String? {
        var bytes: [UInt8] = []
        var iterator = utf8.makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%"), let high = iterator.next(), let low = iterator.next(),
                let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)
            {
                bytes.append(value)
            } else {
                bytes.append(byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }
}
