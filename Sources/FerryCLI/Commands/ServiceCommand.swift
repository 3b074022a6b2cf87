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
        throw ExitCode(Self.start(idleTimeout: idleTimeout, ifPending: ifPending))
    }

    /// Runs the service and returns its exit status. `ferry service` with nothing else, as D-Bus
    /// activation and the systemd unit start it, comes here without the argument parser: on a cold
    /// start every millisecond is a wait for whoever shared something (FerryCommand).
    static func start(idleTimeout: UInt32? = nil, ifPending: Bool = false) -> Int32 {
        let settings = ServiceSettings(environment: ProcessEnvironment.current, idleTimeoutOverride: idleTimeout)
        if ifPending, !ServiceApplication.hasPendingWork(settings: settings) { return 0 }
        MemoryPolicy.keepFlat()
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = settings.logLevel
            return handler
        }
        return ServiceApplication.run(settings: settings, logger: Logger(label: "ferry"))
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
