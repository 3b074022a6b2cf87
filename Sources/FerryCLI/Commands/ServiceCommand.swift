import ArgumentParser
import FerryCore

/// `ferry service`: the service itself, which the command line does not link. The `ferry`
/// executable hands it over (`ServiceCommand.start`, set before parsing).
struct ServiceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "service",
        abstract: tr("Run the Ferry service (D-Bus activation starts it; you rarely need this)."),
        discussion: tr(
            // TRANSLATORS: FERRY_LOG is an environment variable and trace…error the values it takes: keep them as they
            // are.
            "Logs go to standard error; FERRY_LOG sets the level (trace, debug, info, notice, warning, error)."))

    @Option(
        help: ArgumentHelp(
            // TRANSLATORS: FERRY_IDLE_TIMEOUT is an environment variable: keep it as it is.
            tr("Seconds to stay up with nothing to do (default: FERRY_IDLE_TIMEOUT or 10)."), valueName: "SECONDS"))
    var idleTimeout: UInt32?

    @Flag(
        help: ArgumentHelp(
            tr(
                "Run only when shares wait to be sent, and exit at once otherwise (the login autostart entry uses this)."
            )))
    var ifPending = false

    func run() throws {
        throw ExitCode(FerryCommand.service(idleTimeout, ifPending))
    }
}
