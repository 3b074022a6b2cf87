import AsyncHTTPClient
import FerryCore
import Foundation
import NIOCore
import NIOHTTP1
import NIOConcurrencyHelpers

/// The client-server API's transport: JSON in and out, Matrix errors decoded, one shared
/// connection pool (keep-alive), the access token in a header and never in a URL or log, and
/// renewed where it expires (`Tokens`).
public struct MatrixHTTP: Sendable {
    public let baseURL: String
    let tokens: Tokens?
    let client: HTTPClient
    /// Answers JSON requests in place of the network (see `Responder`); nil in Ferry itself.
    let responder: Responder?

    public init(baseURL: String, accessToken: String? = nil, client: HTTPClient = .ferry) {
        self.init(baseURL: baseURL, tokens: accessToken.map(Tokens.init(access:)), client: client, responder: nil)
    }

    /// A client speaking as `session`, renewing its tokens where they expire.
    public init(session: Session, responder: Responder? = nil) {
        self.init(baseURL: session.homeserver, tokens: session.tokens, client: .ferry, responder: responder)
    }

    /// A client whose JSON requests `responder` answers, in process: a homeserver written for unit
    /// tests, so that what the encryption asks and how it takes each answer are tested in
    /// milliseconds. Everything above the wire (encoding, the answer's status and Matrix error
    /// decoding) runs as it does against a server. Nil: the network, as `init(baseURL:accessToken:client:)`.
    public init(baseURL: String, accessToken: String? = nil, responder: Responder?) {
        self.init(baseURL: baseURL, tokens: accessToken.map(Tokens.init(access:)), client: .ferry, responder: responder)
    }

    private init(baseURL: String, tokens: Tokens?, client: HTTPClient, responder: Responder?) {
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.tokens = tokens
        self.client = client
        self.responder = responder
    }

    /// The same transport (and responder) to another address exactly as written, without a token:
    /// an OAuth 2.0 endpoint.
    func to(_ address: String) -> MatrixHTTP {
        MatrixHTTP(exactly: address, tokens: nil, client: client, responder: responder)
    }

    /// An address used exactly as written (an OAuth 2.0 endpoint: a trailing `/` is part of it).
    init(exactly address: String, client: HTTPClient = .ferry) {
        self.init(exactly: address, tokens: nil, client: client, responder: nil)
    }

    private init(exactly address: String, tokens: Tokens?, client: HTTPClient, responder: Responder?) {
        baseURL = address
        self.tokens = tokens
        self.client = client
        self.responder = responder
    }

    public func with(accessToken: String?) -> MatrixHTTP {
        MatrixHTTP(
            baseURL: baseURL, tokens: accessToken.map(Tokens.init(access:)), client: client, responder: responder)
    }

    /// One JSON request as it would go on the wire, and its answer.
    public struct Exchange: Sendable {
        /// Where it went: the homeserver, or an OAuth 2.0 endpoint.
        public var address: String
        public var method: String
        /// The path, percent-encoded as sent, without the query.
        public var path: String
        public var query: [String: String]
        public var body: Data?
        /// The access token the request carried.
        public var bearer: String?
        /// Whether the request carried an access token.
        public var authorized: Bool { bearer != nil }
    }

    /// What answers an `Exchange`: an HTTP status and a JSON body.
    public typealias Responder = @Sendable (Exchange) async -> (status: Int, body: Data)

    /// Sends a request and decodes a JSON answer of type `Answer`. An expired access token is
    /// renewed first, or when the server says so (`soft_logout`), and the request sent once more;
    /// so is a request whose token another renewed meanwhile (a server may end the old one at once).
    func call<Answer: Decodable>(
        _ method: HTTPMethod, _ path: String, query: [(String, String)] = [],
        json: (any Encodable)? = nil, timeout: TimeAmount = .seconds(30),
        as _: Answer.Type = Answer.self
    ) async throws(MatrixError) -> Answer {
        var encoded: Data?
        if let json {
            do {
                encoded = try JSONEncoder().encode(json)
            } catch {
                throw MatrixError(kind: .malformed, message: "cannot encode the request: \(error)")
            }
        }
        let bytes = try await renewing { token async throws(MatrixError) in
            try await exchange(method, path, query: query, json: encoded, timeout: timeout, token: token)
        }
        do {
            return try JSONDecoder().decode(Answer.self, from: bytes)
        } catch {
            throw MatrixError(kind: .malformed, message: "\(path): \(error)")
        }
    }

    /// Posts an HTML form (`application/x-www-form-urlencoded`, RFC 6749's requests) to the
    /// address itself (`baseURL`: an OAuth 2.0 endpoint), without an access token, and decodes a
    /// JSON answer. An OAuth error answer (`error`, `error_description`) becomes a `MatrixError`
    /// with the `error` as its errcode.
    func postForm<Answer: Decodable>(
        _ form: [(String, String)], timeout: TimeAmount = .seconds(30), as _: Answer.Type = Answer.self
    ) async throws(MatrixError) -> Answer {
        let bytes = try await sendForm(form, timeout: timeout)
        do {
            return try JSONDecoder().decode(Answer.self, from: bytes)
        } catch {
            throw MatrixError(kind: .malformed, message: "\(baseURL): \(error)")
        }
    }

    /// Posts a form and returns the answer's bytes as they are (RFC 7009's revocation answers any
    /// body, often none, and its caller reads none).
    @discardableResult
    func sendForm(_ form: [(String, String)], timeout: TimeAmount = .seconds(30)) async throws(MatrixError) -> Data {
        try await exchange(
            .POST, "", query: [], json: Data(Self.queryString(form).dropFirst().utf8),
            contentType: "application/x-www-form-urlencoded", timeout: timeout, token: nil)
    }

    /// Sends a GET and returns the answer's bytes as they are (media), with the same renewal of an
    /// expired token as `call`. An answer over `limit` bytes is refused (`malformed`) without being
    /// read further.
    func bytes(
        _ path: String, query: [(String, String)] = [], timeout: TimeAmount = .seconds(30), limit: Int
    ) async throws(MatrixError) -> Data {
        try await renewing { token async throws(MatrixError) in
            try await exchange(.GET, path, query: query, json: nil, timeout: timeout, limit: limit, token: token)
        }
    }

    /// Runs `request` with the access token, and once more with a newer one when the first was
    /// refused for it and has been renewed (`renewedAfter`).
    private func renewing<Result>(
        _ request: (String?) async throws(MatrixError) -> Result
    ) async throws(MatrixError) -> Result {
        let token = try await tokens?.forRequest(through: self)
        do throws(MatrixError) {
            return try await request(token)
        } catch {
            guard try await renewedAfter(error, sentWith: token) else { throw error }
            return try await request(tokens?.access)
        }
    }

    /// Whether a request refused for its token (`sent`) may go again with a newer one: renewed by
    /// another request meanwhile, or now, when the server says the token expired (`soft_logout`).
    private func renewedAfter(_ error: MatrixError, sentWith sent: String?) async throws(MatrixError) -> Bool {
        guard let tokens, let sent, error.isUnknownToken else { return false }
        if tokens.access != sent { return true }
        guard error.softLogout else { return false }
        return try await tokens.renew(replacing: sent, through: self)
    }

    /// One request sent with `token`, to the responder (unit tests) or the server: the body of a
    /// 2xx answer of at most `limit` bytes; anything else becomes a `MatrixError`.
    private func exchange(
        _ method: HTTPMethod, _ path: String, query: [(String, String)], json encoded: Data?,
        contentType: String = "application/json", timeout: TimeAmount, limit: Int = 16 << 20, token: String?
    ) async throws(MatrixError) -> Data {
        if let responder {
            let answer = await responder(
                Exchange(
                    address: baseURL, method: method.rawValue, path: path,
                    query: Dictionary(query, uniquingKeysWith: { $1 }),
                    body: encoded, bearer: token))
            guard answer.body.count <= limit else {
                throw MatrixError(kind: .malformed, message: "\(path): an answer over \(limit) bytes")
            }
            return try Self.success(HTTPResponseStatus(statusCode: answer.status), answer.body, HTTPHeaders())
        }
        return try await send(
            method, path, query: query, body: encoded.map { .bytes(ByteBuffer(bytes: Array($0))) },
            contentType: encoded == nil ? nil : contentType, token: token, timeout: timeout, limit: limit)
    }

    /// Sends a request and returns the body of a 2xx answer; anything else becomes a `MatrixError`.
    private func send(
        _ method: HTTPMethod, _ path: String, query: [(String, String)], body: HTTPClientRequest.Body?,
        contentType: String?, token: String?, timeout: TimeAmount, limit: Int = 16 << 20
    ) async throws(MatrixError) -> Data {
        var request = HTTPClientRequest(url: baseURL + path + Self.queryString(query))
        request.method = method
        request.headers = headers(contentType: contentType, token: token)
        request.body = body
        let response: HTTPClientResponse
        let data: Data
        do {
            response = try await client.execute(request, timeout: timeout)
        } catch {
            throw MatrixError(kind: .transport, message: Self.describe(error))
        }
        // A body said or found to be over the limit is not read: it is not what was asked for.
        if let length = response.headers.first(name: "Content-Length").flatMap(Int.init), length > limit {
            throw MatrixError(kind: .malformed, message: "\(path): an answer of \(length) bytes, over \(limit)")
        }
        do {
            data = Data((try await response.body.collect(upTo: limit)).readableBytesView)
        } catch is NIOTooManyBytesError {
            throw MatrixError(kind: .malformed, message: "\(path): an answer over \(limit) bytes")
        } catch {
            throw MatrixError(kind: .transport, message: Self.describe(error))
        }
        return try Self.success(response.status, data, response.headers)
    }

    /// The headers of every request: the token (never in a URL), the body's type, who asks.
    private func headers(contentType: String?, token: String?) -> HTTPHeaders {
        var headers = HTTPHeaders()
        if let token { headers.add(name: "Authorization", value: "Bearer \(token)") }
        if let contentType { headers.add(name: "Content-Type", value: contentType) }
        headers.add(name: "User-Agent", value: "Ferry")
        return headers
    }

    /// The body of a 2xx answer; anything else becomes a `MatrixError`.
    private static func success(
        _ status: HTTPResponseStatus, _ body: Data, _ headers: HTTPHeaders
    ) throws(MatrixError) -> Data {
        guard (200..<300).contains(status.code) else {
            throw decodeError(status: Int(status.code), body: body, headers: headers)
        }
        return body
    }

    /// How many file chunks may be handed to the connection before the oldest is waited for.
    static let chunksInFlight = 2

    /// How long an upload may go without a single write finishing before it is given up and
    /// retried (by the sender's backoff): a minute, or `FERRY_UPLOAD_STALL_SECONDS`. A slow upload
    /// that moves is never cut off.
    static let uploadStall: TimeAmount = {
        let seconds = ProcessInfo.processInfo.environment["FERRY_UPLOAD_STALL_SECONDS"].flatMap(Int64.init) ?? 60
        return .seconds(min(max(seconds, 1), 3600))
    }()

    /// Sends a file as the request body, from `chunks`, and returns the body of a 2xx answer.
    ///
    /// Through AsyncHTTPClient's StreamWriter rather than an async-sequence body: a write's future
    /// is settled on the connection's event loop, after the writes before it, so waiting for it
    /// before reading further keeps memory at a few chunks. An async-sequence body is read
    /// from another thread ahead of the socket, and a large upload held many chunks at once
    /// (docs/PERFORMANCE.md).
    ///
    /// No deadline for the whole request: a large file over a slow link takes minutes, and a
    /// deadline that grows with the size still cut slow links off, again at every retry. Instead
    /// a watchdog cancels the upload when no write has finished for `stall`; once the body is
    /// sent, the answer has `answerTimeout`.
    ///
    /// A body read once cannot be sent again here (an encryption runs over it as it goes): an
    /// access token refused as expired is renewed and the upload fails as `renewed`, which the
    /// sender takes up again at once. Synapse checks the token once the whole body is in, so the
    /// upload starts with a fresh one (`renewsBeforeUpload`); an upload that took longer than a
    /// token lasts would only fail again, and fails for good with a sentence saying so.
    func sendFile(
        _ method: HTTPMethod, _ path: String, query: [(String, String)] = [], chunks: FileChunks, size: UInt64,
        contentType: String, stall: TimeAmount = uploadStall,
        answerTimeout: TimeAmount = .seconds(120)
    ) async throws(MatrixError) -> Data {
        let token = try await tokens?.forRequest(through: self, upload: true)
        let started = Date()
        do throws(MatrixError) {
            return try await sendFile(
                method, path, query: query, chunks: chunks, size: size, contentType: contentType, token: token,
                stall: stall, answerTimeout: answerTimeout)
        } catch {
            let refused = Date()
            guard try await renewedAfter(error, sentWith: token) else { throw error }
            if let lifetime = tokens?.pair.lifetimeMilliseconds,
                refused.timeIntervalSince(started) * 1000 >= Double(lifetime)
            {
                throw MatrixError(kind: .outlivesSignIn, message: Self.outlives(lifetimeMilliseconds: lifetime))
            }
            throw MatrixError(
                kind: .renewed,
                // TRANSLATORS: why a file was not sent yet, completing "Sending to {room} failed: {reason}."; Ferry
                // sends it again at once.
                message: tr("the sign-in expired during the upload and was renewed"))
        }
    }

    private func sendFile(
        _ method: HTTPMethod, _ path: String, query: [(String, String)], chunks: FileChunks, size: UInt64,
        contentType: String, token: String?, stall: TimeAmount, answerTimeout: TimeAmount
    ) async throws(MatrixError) -> Data {
        let eventLoop = client.eventLoopGroup.any()
        let inFlight = WritesInFlight(limit: Self.chunksInFlight)
        let bodySent = NIOLockedValueBox<NIODeadline?>(nil)
        let body = HTTPClient.Body.stream(contentLength: Int64(clamping: size)) { writer in
            let promise = eventLoop.makePromise(of: Void.self)
            promise.completeWithTask {
                let iterator = chunks.makeAsyncIterator()
                // A chunk on its way while the next is read: the disk and the socket both stay busy.
                while let chunk = try await iterator.next() {
                    try await inFlight.reserve()
                    inFlight.track(writer.write(.byteBuffer(chunk)))
                }
                try await inFlight.drain()
                bodySent.withLockedValue { $0 = .now() }
            }
            return promise.futureResult
        }
        let task: HTTPClient.Task<HTTPClient.Response>
        do {
            let request = try HTTPClient.Request(
                url: baseURL + path + Self.queryString(query), method: method,
                headers: headers(contentType: contentType, token: token), body: body)
            task = client.execute(
                request: request, delegate: ResponseAccumulator(request: request, maxBodySize: 16 << 20),
                eventLoop: .delegate(on: eventLoop), deadline: nil, logger: nil)
        } catch {
            throw MatrixError(kind: .transport, message: Self.describe(error))
        }
        let stalled = NIOLockedValueBox(false)
        let watchdog = Task {
            while !Task.isCancelled {
                try? await Task.sleep(nanoseconds: 1_000_000_000)
                let sent = bodySent.withLockedValue { $0 }
                let late = sent.map { .now() - $0 > answerTimeout } ?? (inFlight.sinceProgress > stall)
                if late {
                    stalled.withLockedValue { $0 = true }
                    task.cancel()
                    return
                }
            }
        }
        defer { watchdog.cancel() }
        let response: HTTPClient.Response
        do {
            response = try await task.futureResult.get()
        } catch {
            if stalled.withLockedValue({ $0 }) {
                let seconds = Int(stall.nanoseconds / 1_000_000_000)
                let reason =
                    bodySent.withLockedValue({ $0 }) == nil
                    ? trn(
                        // TRANSLATORS: why a file was not sent yet, completing a sentence such as "Sending to {room}
                        // failed: {reason}."; Ferry tries again later.
                        "the upload made no progress for {count} second",
                        "the upload made no progress for {count} seconds", seconds)
                    // TRANSLATORS: a reason, completing a sentence such as "The homeserver {server} cannot be reached:
                    // {reason}."
                    : tr("the homeserver did not answer in time")
                throw MatrixError(kind: .transport, message: reason)
            }
            throw MatrixError(kind: .transport, message: Self.describe(error))
        }
        let data = Data(response.body.map { $0.readableBytesView } ?? ByteBuffer().readableBytesView)
        return try Self.success(response.status, data, response.headers)
    }

    /// Why an upload that took longer than a token lives cannot be sent over this connection.
    static func outlives(lifetimeMilliseconds lifetime: Int64) -> String {
        let seconds = Int((Double(lifetime) / 1000).rounded(.up))
        guard seconds >= 120 else {
            return trn(
                // TRANSLATORS: why a file was not sent, completing "Sending to {room} failed: {reason}.".
                "the homeserver ends each sign-in after {count} second, and the upload took longer over this connection",
                "the homeserver ends each sign-in after {count} seconds, and the upload took longer over this connection",
                seconds)
        }
        return trn(
            // TRANSLATORS: why a file was not sent, completing "Sending to {room} failed: {reason}.".
            "the homeserver ends each sign-in after {count} minute, and the upload took longer over this connection",
            "the homeserver ends each sign-in after {count} minutes, and the upload took longer over this connection",
            (seconds + 59) / 60)
    }

    package static func decodeError(status: Int, body: Data, headers: HTTPHeaders, now: Date = Date()) -> MatrixError {
        struct Shape: Decodable {
            var errcode: String?
            var error: String?
            var error_description: String?
            var retry_after_ms: LenientNumber?
            var soft_logout: Bool?
            var session: String?
            struct Flow: Decodable { var stages: [String]? }
            var flows: [Flow]?
        }
        let shape = try? JSONDecoder().decode(Shape.self, from: body)
        // Retry-After is what newer servers send alongside, or instead of, retry_after_ms.
        let retryAfter =
            shape?.retry_after_ms?.value.flatMap(ServerNumbers.retryDelay(milliseconds:))
            ?? headers.first(name: "Retry-After").flatMap { retryDelay(header: $0, now: now) }
        // An OAuth 2.0 endpoint's error (RFC 6749 §5.2) has its code in `error`, such as
        // "invalid_grant", and no errcode: the code is kept as the errcode.
        let oauthCode = shape?.errcode == nil ? shape?.error.flatMap { Self.isOAuthErrorCode($0) ? $0 : nil } : nil
        return MatrixError(
            kind: .http(status: status), errcode: shape?.errcode ?? oauthCode,
            message: oauthCode.flatMap { _ in shape?.error_description } ?? shape?.error ?? "HTTP \(status)",
            retryAfterMilliseconds: retryAfter,
            softLogout: shape?.soft_logout ?? false, authSession: status == 401 ? shape?.session : nil,
            authFlows: Set((shape?.flows ?? []).compactMap { $0.stages?.count == 1 ? $0.stages?.first : nil }))
    }

    /// RFC 6749's error codes are lowercase ASCII words joined by underscores.
    static func isOAuthErrorCode(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 64
            && text.utf8.allSatisfy { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || $0 == UInt8(ascii: "_") }
    }

    /// A `Retry-After` header in milliseconds, clamped (ServerNumbers): delay-seconds or an
    /// HTTP-date (RFC 9110's IMF-fixdate; the obsolete forms only mean Ferry's own backoff).
    package static func retryDelay(header: String, now: Date) -> Int64? {
        if let delay = ServerNumbers.retryDelay(seconds: header) { return delay }
        guard let date = HTTPDate.parse(header.trimmingCharacters(in: .whitespaces)) else { return nil }
        return ServerNumbers.retryDelay(milliseconds: max(0, date.timeIntervalSince(now) * 1000))
    }

    static func describe(_ error: Error) -> String {
        if let error = error as? HTTPClientError, error == .deadlineExceeded || error == .readTimeout {
            // TRANSLATORS: a reason, completing a sentence such as "The homeserver {server} cannot be reached:
            // {reason}."
            return tr("the homeserver did not answer in time")
        }
        let text = String(describing: error)
        if text.contains("CERTIFICATE_VERIFY_FAILED") || text.contains("failedToValidateHostname") {
            return tr(
                // TRANSLATORS: a reason, completing a sentence such as "The homeserver {server} cannot be reached:
                // {reason}."
                "the homeserver's certificate is not trusted by this computer (issued by an authority it does not know, expired, or made for another name)"
            )
        }
        // TRANSLATORS: a reason, completing a sentence such as "The homeserver {server} cannot be reached: {reason}."
        if text.contains("connectTimeout") { return tr("the homeserver did not answer in time") }
        if text.contains("connection reset") || text.contains("Connection refused")
            || text.contains("connectionRefused")
            || text.contains("ECONNREFUSED") || text.contains("errno: 111")
        {
            // TRANSLATORS: a reason, completing a sentence such as "The homeserver {server} cannot be reached:
            // {reason}."
            return tr("the connection was refused")
        }
        return text
    }

    static func queryString(_ query: [(String, String)]) -> String {
        guard !query.isEmpty else { return "" }
        return "?" + query.map { "\(percentEncoded($0.0))=\(percentEncoded($0.1))" }.joined(separator: "&")
    }

    /// Percent-encodes everything but RFC 3986's unreserved characters: room ids, aliases, user ids,
    /// transaction ids and file names all go into paths and queries safely this way.
    static func percentEncoded(_ text: String) -> String {
        var result = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                result.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                result += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return result
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}

/// An empty JSON object, for requests and answers that carry nothing.
struct Empty: Codable, Sendable {}
