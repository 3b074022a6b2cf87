import FerryOutbox
import Logging
import NIOConcurrencyHelpers
import Testing

/// `Logger.attempt`: a failure the caller goes on without is logged with what was being done,
/// never dropped; a success is returned untouched and logs nothing.
struct AttemptTests {
    struct Refused: Error, CustomStringConvertible {
        var description: String { "disk I/O error" }
    }

    @Test func aFailureIsLoggedWithWhatFailedTheShareAndTheErrorAndAnswersNil() {
        let lines = Lines()
        let answer: Int? = lines.logger.attempt("recording an upload", share: "01kshare") { throw Refused() }
        #expect(answer == nil)
        #expect(lines.all == ["error recording an upload failed error=disk I/O error share=01kshare"])
    }

    @Test func aSuccessIsReturnedAndLogsNothing() {
        let lines = Lines()
        #expect(lines.logger.attempt("reading the queue") { 42 } == 42)
        #expect(lines.logger.attempt("reading a share") { () throws -> String? in nil } == nil)
        #expect(lines.all.isEmpty)
    }

    /// The lines a logger wrote, as "level message key=value…".
    final class Lines: Sendable {
        private let box = NIOLockedValueBox<[String]>([])
        var all: [String] { box.withLockedValue { $0 } }

        var logger: Logger { Logger(label: "test") { _ in Handler(lines: self) } }

        struct Handler: LogHandler {
            let lines: Lines
            var logLevel: Logger.Level = .trace
            var metadata: Logger.Metadata = [:]
            subscript(metadataKey key: String) -> Logger.Metadata.Value? {
                get { metadata[key] }
                set { metadata[key] = newValue }
            }

            func log(event: LogEvent) {
                let fields = (event.metadata ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
                lines.box.withLockedValue { $0.append(([event.level.rawValue, "\(event.message)"] + fields).joined(separator: " ")) }
            }
        }
    }
}
