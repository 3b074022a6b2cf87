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
            logger.info("a picture goes without a thumbnail: ferry-thumbnail is not installed")
            return nil
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = [path, thumbnailPath]
        let (output, errors) = (Pipe(), Pipe())
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        let status: Int32 = await withCheckedContinuation { continuation in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do { try process.run() } catch {
                process.terminationHandler = nil
                logger.warning("cannot run \(executable): \(error)")
                continuation.resume(returning: -1)
                return
            }
            let timeLimit = timeLimit
            DispatchQueue.global().asyncAfter(deadline: .now() + timeLimit) { [process] in
                if process.isRunning { process.terminate() }
            }
        }
        guard status >= 0 else { return nil }
        // Both answers are short (one line each): they fit the pipes' buffers, read once the helper has gone.
        let answer = output.fileHandleForReading.readDataToEndOfFile()
        guard status == 0, let facts = try? JSONDecoder().decode(PictureFacts.self, from: answer) else {
            let said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            logger.info(
                "a picture goes without a thumbnail",
                metadata: ["status": "\(status)", "reason": "\(said.trimmingCharacters(in: .whitespacesAndNewlines))"])
            return nil
        }
        return facts
    }
}
