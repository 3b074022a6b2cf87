import AsyncHTTPClient
import NIOCore
import NIOSSL
#if canImport(Glibc)
import Glibc
#endif

extension HTTPClient {
    /// The one HTTP client every Matrix request goes through (one connection pool, kept alive).
    ///
    /// AsyncHTTPClient's own singleton retries a refused connection with its own backoff until the
    /// request's deadline: with the homeserver down, a share sat in "sending" and `Online` stayed
    /// true for the whole 30 s. Here a refused or unreachable connection fails the request at once
    /// (or after a 10 s connect timeout), and Ferry's own backoff, woken by the network monitor,
    /// decides when to try again.
    ///
    /// No redirect is followed: the client-server API has none, and following one (as a browser
    /// would) could carry a request body to another origin, or go from https:// to http://. A 3xx
    /// answer is a refusal like any other. Otherwise the singleton's browser-like settings are kept.
    public static let ferry: HTTPClient = {
        var configuration = HTTPClient.Configuration.singletonConfiguration
        configuration.redirectConfiguration = .disallow
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.timeout.connect = .seconds(10)
        configuration.tlsConfiguration = trust(certificateFile: getenv("SSL_CERT_FILE").map { String(cString: $0) })
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()

    /// Certificates are always verified, against the system's store (Debian's
    /// /etc/ssl/certs/ca-certificates.crt), or against the bundle `SSL_CERT_FILE` names, as OpenSSL
    /// and curl read it: the standard way to trust an organisation's own authority. SwiftNIO's TLS
    /// does not read that variable itself.
    static func trust(certificateFile: String?) -> TLSConfiguration {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.certificateVerification = .fullVerification
        if let certificateFile, !certificateFile.isEmpty { tls.trustRoots = .file(certificateFile) }
        return tls
    }
}
