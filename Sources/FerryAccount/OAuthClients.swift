import FerryMatrix
import Foundation
import Logging
import Synchronization

/// Ferry's registrations at authorization servers (`OAuthClient`), one per issuer, kept in a file
/// of the state directory and reused for every sign-in there. Nothing in it is a secret: a public
/// client has none (RFC 8252), and its tokens are kept apart (`TokenVault`).
public final class OAuthClients: Sendable {
    private let path: String
    private let logger: Logger
    private let lock = Mutex(())

    public init(path: String, logger: Logger) {
        self.path = path
        self.logger = logger
    }

    /// The registration at `metadata`'s issuer: the kept one, or a new one, kept.
    func client(for metadata: AuthMetadata) async throws(MatrixError) -> OAuthClient {
        if let kept = read()[metadata.issuer] { return kept }
        let registered = try await OAuthClient.register(metadata)
        lock.withLock { _ in
            var all = read()
            all[metadata.issuer] = registered
            write(all)
        }
        return registered
    }

    /// Forgets the registration at `issuer`, one the server no longer knows: the next sign-in
    /// registers again.
    func forget(issuer: String) {
        lock.withLock { _ in
            var all = read()
            guard all.removeValue(forKey: issuer) != nil else { return }
            write(all)
        }
    }

    private func read() -> [String: OAuthClient] {
        guard let data = FileManager.default.contents(atPath: path) else { return [:] }
        // Unreadable, it is as if none were kept: Ferry registers again.
        return (try? JSONDecoder().decode([String: OAuthClient].self, from: data)) ?? [:]
    }

    private func write(_ all: [String: OAuthClient]) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        _ = logger.attempt("keeping the sign-in service registrations") {
            try encoder.encode(all).write(to: URL(fileURLWithPath: path), options: .atomic)
        }
    }
}
