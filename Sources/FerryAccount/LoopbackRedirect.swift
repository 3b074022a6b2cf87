import FerryCore
import FerryMatrix
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOConcurrencyHelpers

/// The one-time loopback address a browser sign-in sends the browser back to: a homeserver's SSO
/// page with a `loginToken` (spec: client-server API, "SSO client login"), or an OAuth 2.0
/// authorization server with a `code` (RFC 8252). Listens on 127.0.0.1 on a port the kernel
/// picks, answers exactly one redirect with a page saying the person may close the tab, and is
/// gone afterwards (after success, failure or a timeout).
///
/// Any program on this computer can connect to a loopback port, and one that slipped in its own
/// `loginToken` would sign Ferry in to an account of its choosing. So the redirect URL carries a
/// random path and a random single-use `state` that only the server's page (and so the browser)
/// learns; a request without both, or with a `Host` other than this listener, is refused and
/// what it carried never used. (An OAuth code is bound to Ferry's PKCE verifier as well.)
// @unchecked Sendable: immutable; a NIO Channel and EventLoopPromise may be used from any thread
// (their operations hop to their event loop).
public final class LoopbackRedirect: @unchecked Sendable {
    // @unchecked: every stored property is a constant; the promise is completed on its event loop.
    private let channel: Channel
    private let answer: EventLoopPromise<[String: String]>
    /// The SSO redirect: the address with the state in it (the homeserver adds `loginToken`).
    public let url: String
    public let port: Int

    private init(channel: Channel, answer: EventLoopPromise<[String: String]>, expected: Expected, port: Int) {
        self.channel = channel
        self.answer = answer
        self.port = port
        url = "http://\(expected.host)\(expected.path)?state=\(expected.state)"
    }

    /// What the one redirect must look like.
    package struct Expected: Sendable {
        var host: String
        var path: String
        var state: String
        /// The parameters that make an answer: any one of them, not empty.
        var answers: Set<String>

        package init(host: String, path: String, state: String, answers: Set<String> = ["loginToken"]) {
            self.host = host
            self.path = path
            self.state = state
            self.answers = answers
        }

        /// The query of a request for exactly this redirect (this Host, path and state, no
        /// parameter twice, one of `answers` given); nil for anything else.
        package func answer(uri: String, host requestHost: String?) -> [String: String]? {
            guard requestHost == host, let question = uri.firstIndex(of: "?"), uri[..<question] == path else {
                return nil
            }
            var query: [String: String] = [:]
            for pair in uri[uri.index(after: question)...].split(separator: "&") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                guard parts.count == 2, let name = String(parts[0]).removingPercentEncoding,
                    let value = String(parts[1]).removingPercentEncoding
                else { continue }
                guard query[name] == nil else { return nil }
                query[name] = value
            }
            guard query["state"] == state, answers.contains(where: { query[$0].map { !$0.isEmpty } == true })
            else { return nil }
            return query
        }

        /// The `loginToken` of a request for exactly this redirect; nil for anything else.
        package func loginToken(uri: String, host requestHost: String?) -> String? {
            answer(uri: uri, host: requestHost)?["loginToken"].flatMap { $0.isEmpty ? nil : $0 }
        }
    }

    /// A listener for an SSO redirect: a random path and state of its own.
    public static func listen() async throws -> LoopbackRedirect {
        try await listen(path: "/ferry-sso/" + Random.hex(), state: Random.hex(), answers: ["loginToken"])
    }

    /// A listener on `path` for an answer carrying `state` and one of `answers`.
    public static func listen(path: String, state: String, answers: Set<String>) async throws -> LoopbackRedirect {
        let group = MultiThreadedEventLoopGroup.singleton
        let token = group.next().makePromise(of: [String: String].self)
        let expected = ExpectedBox()
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { child in
                child.pipeline.configureHTTPServerPipeline().flatMap {
                    child.pipeline.addHandler(CallbackHandler(token: token, expected: expected))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        let port = channel.localAddress?.port ?? 0
        let made = Expected(host: "127.0.0.1:\(port)", path: path, state: state, answers: answers)
        expected.set(made)
        return LoopbackRedirect(channel: channel, answer: token, expected: made, port: port)
    }

    /// The expectation, set once the port is known (before the URL is handed to anyone).
    final class ExpectedBox: Sendable {
        private let value = NIOLockedValueBox<Expected?>(nil)
        func set(_ expected: Expected) { value.withLockedValue { $0 = expected } }
        var current: Expected? { value.withLockedValue { $0 } }
    }

    /// Waits for the browser to come back, at most `seconds`: the answer's query, nil when it did not.
    public func answer(within seconds: Int64) async -> [String: String]? {
        let timeout = channel.eventLoop.scheduleTask(in: .seconds(seconds)) {
            self.answer.fail(ChannelError.connectTimeout(.seconds(seconds)))
        }
        defer {
            timeout.cancel()
            channel.close(promise: nil)
        }
        return try? await answer.futureResult.get()
    }

    public func cancel() {
        answer.fail(ChannelError.alreadyClosed)
        channel.close(promise: nil)
    }

    private final class CallbackHandler: ChannelInboundHandler, @unchecked Sendable {
        // @unchecked: NIO calls a handler on its channel's event loop only; its lets are constants.
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart
        let token: EventLoopPromise<[String: String]>
        let expected: ExpectedBox

        init(token: EventLoopPromise<[String: String]>, expected: ExpectedBox) {
            self.token = token
            self.expected = expected
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            guard case .head(let head) = unwrapInboundIn(data) else { return }
            let found = expected.current?.answer(uri: head.uri, host: head.headers.first(name: "Host"))
            // TRANSLATORS: shown in the browser, on a page that was not opened by the homeserver's sign-in.
            let refused = tr("This address only takes a sign-in from the homeserver.")
            // TRANSLATORS: the heading of the page the browser shows once signing in to Ferry worked.
            let heading = tr("Signed in to Ferry")
            // TRANSLATORS: below "Signed in to Ferry", on the same page in the browser.
            let closeTab = tr("You can close this tab now.")
            // TRANSLATORS: the heading of the page the browser shows when the person did not let Ferry sign in.
            let declined = tr("Not signed in to Ferry")
            let title = found?["error"] == nil ? heading : declined
            let page =
                found == nil
                ? "<!doctype html><title>Ferry</title><p>\(Self.html(refused))"
                : "<!doctype html><title>Ferry</title><h1>\(Self.html(title))</h1><p>\(Self.html(closeTab))"
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
