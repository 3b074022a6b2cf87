import Foundation
import Logging
import NIOConcurrencyHelpers
import XCTest

/// The sender's log during a test: kept while the test runs, printed only when it fails (lines such
/// as "error=Forbidden … delivery failed" are what a passing refusal test should log, and read like
/// failures on a green run). `FERRY_TEST_LOG=1` prints every line as it comes instead.
final class TestLog: XCTestObservation, Sendable {
    /// A logger whose lines go to the test under way.
    static var logger: Logger {
        shared.observe()
        return Logger(label: "test") { label in Handler(label: label, log: shared) }
    }

    /// The lines the test under way has logged so far.
    static var lines: [String] {
        shared.observe()
        return shared.state.withLockedValue { $0.lines }
    }

    private static let shared = TestLog(live: ProcessInfo.processInfo.environment["FERRY_TEST_LOG"] != nil)

    private let live: Bool
    private let state = NIOLockedValueBox(State())

    private struct State {
        var observing = false
        var lines: [String] = []
        var failed = false
    }

    private init(live: Bool) { self.live = live }

    /// Registered at the first logger asked for, which is inside the first test that logs: the lines
    /// before it belong to that test anyway.
    private func observe() {
        let first = state.withLockedValue { state in
            defer { state.observing = true }
            return !state.observing
        }
        if first { XCTestObservationCenter.shared.addTestObserver(self) }
    }

    fileprivate func append(_ line: String) {
        if live { print(line) }
        state.withLockedValue { $0.lines.append(line) }
    }

    func testCaseWillStart(_ testCase: XCTestCase) {
        state.withLockedValue { $0 = State(observing: true) }
    }

    func testCase(
        _ testCase: XCTestCase, didFailWithDescription description: String, inFile filePath: String?,
        atLine lineNumber: Int
    ) {
        state.withLockedValue { $0.failed = true }
    }

    func testCaseDidFinish(_ testCase: XCTestCase) {
        let (failed, lines) = state.withLockedValue { state in
            defer { state = State(observing: true) }
            return (state.failed, state.lines)
        }
        guard failed, !live, !lines.isEmpty else { return }
        print("The log of \(testCase.name), which failed:")
        lines.forEach { print("  " + $0) }
    }

    private struct Handler: LogHandler {
        let label: String
        let log: TestLog
        var logLevel: Logger.Level = .trace
        var metadata: Logger.Metadata = [:]

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let all = metadata.merging(event.metadata ?? [:]) { $1 }
            let fields = all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            log.append("\(event.level) \(label):\(fields.isEmpty ? "" : " " + fields) \(event.message)")
        }
    }
}
