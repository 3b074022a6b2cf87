import FerryCore
import Foundation
import Logging

/// Reads a picture before it is sent: the size it is shown at, a thumbnail, a blurhash.
public protocol PictureReading: Sendable {
    /// The picture's facts, its thumbnail (when it needs one) written to `thumbnailPath`; nil when
    /// the picture cannot be read. Never fails a share: a picture without facts goes as it is.
    func read(_ path: String, thumbnailPath: String) async -> PictureFacts?
}

/// `ferry-thumbnail`, run once for each picture: the decoders work in a process of their own (see
/// its main.swift).
public struct ThumbnailHelper: PictureReading {
    /// Where the helper is, looked up at the first picture (nothing of it on a cold start's path);
    /// nil when it is not installed, and then pictures go without.
    let locate: @Sendable () -> String?
    let timeLimit: Double
    let logger: Logger

    public init(locate: @escaping @Sendable () -> String?, timeLimit: Double = 30, logger: Logger) {
        self.locate = locate
        self.timeLimit = timeLimit
        self.logger = logger
    }

    public func read(_ path: String, thumbnailPath: String) async -> PictureFacts? {
        guard let executable = locate() else {
            logger.debug("a picture goes without a thumbnail: ferry-thumbnail is not installed")
            return nil
        }
        let helper = HelperProcess(
            executable: executable, timeLimit: timeLimit,
            environment: Self.environment(ProcessInfo.processInfo.environment))
        let outcome: HelperProcess.Outcome
        do { outcome = try await helper.run([path, thumbnailPath]) } catch {
            logger.warning("cannot run \(executable): \(error.reason)")
            return nil
        }
        guard outcome.status == 0, let facts = try? JSONDecoder().decode(PictureFacts.self, from: outcome.output),
            facts.isSound
        else {
            logger.info(
                "a picture goes without a thumbnail",
                metadata: ["status": "\(outcome.status)", "reason": "\(outcome.said)"])
            return nil
        }
        return facts
    }

    /// The helper's environment: GdkPixbuf's own variables and nothing else. Not the session bus's
    /// address, nor anything else a decoder that went wrong could reach the service's secrets with.
    static func environment(_ service: [String: String]) -> [String: String] {
        service.filter { $0.key.hasPrefix("GDK_PIXBUF_") }
    }
}
