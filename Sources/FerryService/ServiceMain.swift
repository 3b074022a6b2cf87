import GLibAdapter
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// `ferry service`, as the `ferry` executable hands it over (the command line itself does not link
/// the service): settings from the environment, logging to standard error, then the service.
public enum ServiceMain {
    /// Runs the service and returns its exit status. With `ifPending`, returns 0 at once unless
    /// shares wait to be sent (the login autostart entry).
    @GLibMain public static func start(idleTimeout: UInt32? = nil, ifPending: Bool = false) -> Int32 {
        let settings = ServiceSettings(environment: ProcessEnvironment.current, idleTimeoutOverride: idleTimeout)
        if ifPending, !ServiceApplication.hasPendingWork(settings: settings) { return 0 }
        MemoryPolicy.keepFlat()
        let noCoreDumps = CoreDumps.turnOff()
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = settings.logLevel
            return handler
        }
        let logger = Logger(label: "ferry")
        if noCoreDumps {
            logger.debug("core dumps are off")
        } else {
            logger.warning("core dumps could not be turned off; a crash may write secrets to disk")
        }
        return ServiceApplication.run(settings: settings, logger: logger)
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
