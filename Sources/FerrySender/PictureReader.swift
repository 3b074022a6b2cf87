import Dispatch
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
/// its main.swift), which is given `timeLimit` seconds and then stopped.
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
        // The helper is waited for on a thread of its own, never on the sender's.
        return await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(returning: run(executable, arguments: [path, thumbnailPath]))
            }
        }
    }

    /// What the helper says. Both its pipes are drained while it runs (a loader that talks a lot on
    /// stderr never blocks it), and both are closed before this returns: nothing of a picture
    /// outlives its run.
    private func run(_ executable: String, arguments: [String]) -> PictureFacts? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = Self.environment(ProcessInfo.processInfo.environment)
        let (output, errors) = (Pipe(), Pipe())
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        defer {
            try? output.fileHandleForReading.close()
            try? errors.fileHandleForReading.close()
        }
        do { try process.run() } catch {
            logger.warning("cannot run \(executable): \(error)")
            return nil
        }
        let stop = DispatchWorkItem { [weak process] in process?.terminate() }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeLimit, execute: stop)
        let said = Said()
        let stderrRead = DispatchGroup()
        DispatchQueue.global().async(group: stderrRead) {
            said.keep(errors.fileHandleForReading.readDataToEndOfFile())
        }
        let answer = output.fileHandleForReading.readDataToEndOfFile()
        stderrRead.wait()
        process.waitUntilExit()
        stop.cancel()
        let status = process.terminationStatus
        guard status == 0, let facts = try? JSONDecoder().decode(PictureFacts.self, from: answer), facts.isSound
        else {
            logger.info(
                "a picture goes without a thumbnail",
                metadata: ["status": "\(status)", "reason": "\(said.text)"])
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

/// What the helper wrote to stderr, read on another thread: its first line, at most 300 characters
/// (GdkPixbuf's error is one sentence; anything more is a loader's chatter).
private final class Said: @unchecked Sendable {
    private let lock = NSLock()
    private var data = Data()

    func keep(_ bytes: Data) { lock.withLock { data = bytes } }

    var text: String {
        let all = lock.withLock { String(decoding: data, as: UTF8.self) }
        let line = all.split(separator: "\n", maxSplits: 1).first.map(String.init) ?? ""
        return String(line.prefix(300))
    }
}
