import Dispatch
import Foundation
import Logging

/// One run of a reader helper (`ferry-thumbnail`, `ferry-media`): a program that reads a file from
/// anywhere with a system's decoders, in a process of its own, given `timeLimit` seconds and then
/// stopped, and whose environment is only what its decoders need.
struct HelperProcess {
    let executable: String
    let timeLimit: Double
    let environment: [String: String]

    /// What the helper said: its exit status, stdout, and the first line of its stderr.
    struct Outcome {
        var status: Int32
        var output: Data
        var said: String
    }

    /// Runs the helper on a thread of its own, never the sender's; nil when it could not start.
    func run(_ arguments: [String]) async throws(HelperStartFailure) -> Outcome {
        let result = await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: runWaiting(arguments)) }
        }
        return try result.get()
    }

    /// Both pipes are drained while the helper runs (a decoder that talks a lot on stderr never
    /// blocks it), and both are closed before this returns: nothing of a file outlives its run.
    private func runWaiting(_ arguments: [String]) -> Result<Outcome, HelperStartFailure> {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = environment
        let (output, errors) = (Pipe(), Pipe())
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        defer {
            try? output.fileHandleForReading.close()
            try? errors.fileHandleForReading.close()
        }
        do { try process.run() } catch { return .failure(HelperStartFailure(reason: "\(error)")) }
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
        return .success(Outcome(status: process.terminationStatus, output: answer, said: said.text))
    }
}

extension HelperProcess {
    /// What the helper at `locate()` says of a file, decoded as `Facts` and kept when `sound`: nil
    /// (and said in the log as `without`) when it is not installed, could not run, failed, or
    /// said what cannot be so. Never an error: a file the helper cannot read goes without.
    static func facts<Facts: Decodable>(
        _: Facts.Type, from locate: () -> String?, arguments: [String], timeLimit: Double,
        environment: [String: String], logger: Logger, without: Logger.Message, sound: (Facts) -> Bool
    ) async -> Facts? {
        guard let executable = locate() else {
            logger.debug("\(without): the helper is not installed")
            return nil
        }
        let helper = HelperProcess(executable: executable, timeLimit: timeLimit, environment: environment)
        let outcome: Outcome
        do { outcome = try await helper.run(arguments) } catch {
            logger.warning("cannot run \(executable): \(error.reason)")
            return nil
        }
        guard outcome.status == 0, let facts = try? JSONDecoder().decode(Facts.self, from: outcome.output), sound(facts)
        else {
            logger.info(without, metadata: ["status": "\(outcome.status)", "reason": "\(outcome.said)"])
            return nil
        }
        return facts
    }
}

/// A helper that could not be started (its file gone or not executable).
struct HelperStartFailure: Error {
    var reason: String
}

/// What the helper wrote to stderr, read on another thread: its first line, at most 300 characters
/// (a decoder's error is one sentence; anything more is its chatter).
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
