import ArgumentParser
import FerryService
import GLibAdapter
import Logging
#if canImport(Glibc)
import Glibc
#endif

struct ServiceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "service",
        abstract: "Run the Ferry service (D-Bus activation starts it; you rarely need this).",
        discussion: "Logs go to standard error; FERRY_LOG sets the level (trace, debug, info, notice, warning, error).")

    @Option(help: ArgumentHelp("Seconds to stay up with nothing to do (default: FERRY_IDLE_TIMEOUT or 10).", valueName: "SECONDS"))
    var idleTimeout: UInt32?

    @Flag(help: "Run only when shares wait to be sent, and exit at once otherwise (the login autostart entry uses this).")
    var ifPending = false

    func run() throws {
        let settings = ServiceSettings(environment: ProcessEnvironment.current, idleTimeoutOverride: idleTimeout)
        if ifPending, !ServiceApplication.hasPendingWork(settings: settings) { return }
        MemoryPolicy.keepFlat()
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = settings.logLevel
            return handler
        }
        let status = ServiceApplication.run(settings: settings, logger: Logger(label: "ferry"))
        throw ExitCode(status)
    }
}

/// The process environment as a dictionary, without Foundation.
enum ProcessEnvironment {
    static var current: [String: String] {
        var result: [String: String] = [:]
        var pointer = environ
        while let entry = pointer.pointee {
            let text = String(cString: entry)
            if let equals = text.firstIndex(of: "=") {
                result[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            pointer += 1
        }
        return result
    }
}
