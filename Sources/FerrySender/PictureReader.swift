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
        await HelperProcess.facts(
            PictureFacts.self, from: locate, arguments: [path, thumbnailPath], timeLimit: timeLimit,
            environment: Self.environment(ProcessInfo.processInfo.environment), logger: logger,
            without: "a picture goes without a thumbnail", sound: \.isSound)
    }

    /// The helper's environment: GdkPixbuf's own variables and nothing else. Not the session bus's
    /// address, nor anything else a decoder that went wrong could reach the service's secrets with.
    static func environment(_ service: [String: String]) -> [String: String] {
        service.filter { $0.key.hasPrefix("GDK_PIXBUF_") }
    }
}
