import FerryCore
import Foundation
import Logging

/// Reads a video or a sound before it is sent: how long it plays, a video's size and poster frame.
public protocol MediaReading: Sendable {
    /// The file's facts, a video's poster frame written to `posterPath`; nil when the file cannot
    /// be read. Never fails a share: a file without facts goes as it is.
    func read(_ path: String, posterPath: String) async -> MediaFacts?
}

/// `ferry-media`, run once for each video or sound: GStreamer's demuxers and decoders work in a
/// process of their own (see its main.swift).
public struct MediaHelper: MediaReading {
    /// Where the helper is, looked up at the first video or sound; nil when it is not installed,
    /// and then they go without.
    let locate: @Sendable () -> String?
    let timeLimit: Double
    let logger: Logger

    public init(locate: @escaping @Sendable () -> String?, timeLimit: Double = 30, logger: Logger) {
        self.locate = locate
        self.timeLimit = timeLimit
        self.logger = logger
    }

    public func read(_ path: String, posterPath: String) async -> MediaFacts? {
        guard
            var facts = await HelperProcess.facts(
                MediaFacts.self, from: locate, arguments: [path, posterPath], timeLimit: timeLimit,
                environment: Self.environment(ProcessInfo.processInfo.environment), logger: logger,
                without: "a video or sound goes without its duration and poster",
                sound: { $0.picture?.isSound ?? true })
        else { return nil }
        // A duration past belief is left out; the size and poster are still good.
        if !facts.isSound { facts.duration = nil }
        return facts
    }

    /// The helper's environment: GStreamer's own variables and GdkPixbuf's (the poster is saved
    /// through it), and where the person's cache is (GStreamer keeps its list of plugins there,
    /// made once, so that each run does not scan every plugin). Nothing else: not the session
    /// bus's address, nor anything a decoder that went wrong could reach the service's secrets with.
    static func environment(_ service: [String: String]) -> [String: String] {
        service.filter {
            $0.key.hasPrefix("GST_") || $0.key.hasPrefix("GDK_PIXBUF_") || $0.key == "HOME"
                || $0.key == "XDG_CACHE_HOME"
        }
    }
}
