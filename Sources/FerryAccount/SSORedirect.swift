import NIOCore
import NIOHTTP1
import NIOPosix

/// The one-time loopback address a homeserver's SSO page sends the browser back to, carrying the
/// `loginToken` (spec: client-server API, "SSO client login"). Listens on 127.0.0.1 on a port the
/// kernel picks, answers exactly one redirect with a page saying the person may close the tab, and
/// is gone afterwards; any other request is refused.
public final class SSORedirect: @unchecked Sendable {
    private let channel: Channel
    private let token: EventLoopPromise<String>
    public let url: String

    private init(channel: Channel, token: EventLoopPromise<String>) {
        self.channel = channel
        self.token = token
        url = "http://127.0.0.1:\(channel.localAddress?.port ?? 0)/ferry-sso"
    }

    public static func listen() async throws -> SSORedirect {
        let group = MultiThreadedEventLoopGroup.singleton
        let token = group.next().makePromise(of: String.self)
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { child in
                child.pipeline.configureHTTPServerPipeline().flatMap {
                    child.pipeline.addHandler(CallbackHandler(token: token))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return SSORedirect(channel: channel, token: token)
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
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart
        let token: EventLoopPromise<String>

        init(token: EventLoopPromise<String>) { self.token = token }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            guard case .head(let head) = unwrapInboundIn(data) else { return }
            let found = Self.loginToken(in: head.uri)
            let page = found == nil
                ? "<!doctype html><title>Ferry</title><p>This address only takes a sign-in from the homeserver."
                : "<!doctype html><title>Ferry</title><h1>Signed in to Ferry</h1><p>You can close this tab now."
            var headers = HTTPHeaders()
            headers.add(name: "Content-Type", value: "text/html; charset=utf-8")
            headers.add(name: "Content-Length", value: "\(page.utf8.count)")
            headers.add(name: "Connection", value: "close")
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: found == nil ? .notFound : .ok,
                                                                  headers: headers))), promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: page)))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in context.close(promise: nil) }
            if let found { token.succeed(found) }
        }

        /// `loginToken` from `/ferry-sso?loginToken=…`, percent-decoded.
        static func loginToken(in uri: String) -> String? {
            guard uri.hasPrefix("/ferry-sso?"), let query = uri.split(separator: "?", maxSplits: 1).last else { return nil }
            for pair in query.split(separator: "&") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                if parts.count == 2, parts[0] == "loginToken" { return String(parts[1]).removingPercentEncoding }
            }
            return nil
        }
    }
}

extension String {
    fileprivate var removingPercentEncoding: String? {
        var bytes: [UInt8] = []
        var iterator = utf8.makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%"), let high = iterator.next(), let low = iterator.next(),
               let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16) {
                bytes.append(value)
            } else {
                bytes.append(byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }
}
