import ArgumentParser
import FerryCore
#if canImport(Glibc)
import Glibc
#endif

/// `ferry`: share files, text and links into your chats, from the command line.
public struct FerryCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "ferry",
        abstract: tr("Share files, text and links into your chats."),
        // Two paragraphs, two messages for translators.
        discussion: tr(
            "Ferry runs as a D-Bus service on your session bus; these commands talk to it and start it when needed. Shares are kept until they are sent, even across restarts."
        )
            + "\n\n"
            + tr(
                // TRANSLATORS: `ferry --help`; the numbers are the command's exit statuses and stay as they are.
                "Exit status: 0 done, 1 a share not delivered everywhere, 64 wrong usage, 65 bad input, 66 a file is missing or unreadable, 67 no such room or person, 69 the service or homeserver is unavailable, 74 an I/O error, 75 try again later, 76 the homeserver refused, 77 not signed in or not allowed."
            ),
        version: "ferry \(FerryVersion.current)",
        subcommands: [
            OpenCommand.self, SendCommand.self, TextCommand.self, SharesCommand.self,
            ShowCommand.self, CancelCommand.self, CompleteCommand.self, RetryCommand.self, LoginCommand.self,
            LogoutCommand.self, VerifyCommand.self,
            StatusCommand.self, AccountsCommand.self, DestinationsCommand.self, ServiceCommand.self,
        ])

    public init() {}

    /// Runs the service (idle timeout, only if shares are pending) and returns its exit status:
    /// given by the `ferry` executable, which links the service module.
    nonisolated(unsafe) static var service: (UInt32?, Bool) -> Int32 = { _, _ in ExitStatus.software }

    /// Entry point: refuses arguments that are not UTF-8 (Swift would silently repair them), then
    /// parses. `service` runs `ferry service`.
    public static func runFromProcessArguments(service: @escaping (UInt32?, Bool) -> Int32) -> Never {
        self.service = service
        for index in 1..<Int(CommandLine.argc) where String(validatingCString: CommandLine.unsafeArgv[index]!) == nil {
            Terminal.error(
                // TRANSLATORS: {index} is the position of the argument on the command line (1 is the first).
                tr("argument {index} is not valid UTF-8 text; Ferry shares text as UTF-8.", ["index": String(index)]))
            Glibc.exit(ExitStatus.dataError)
        }
        // How the service is started (D-Bus activation, the systemd unit): straight to it, without
        // the parser's reflection over every command and option (docs/PERFORMANCE.md).
        if CommandLine.arguments.dropFirst() == ["service"] { Glibc.exit(service(nil, false)) }
        main()
        Glibc.exit(0)
    }
}

/// A subcommand whose work can fail with a `CommandFailure`: printed as `ferry: sentence`, exit status as given.
protocol FerrySubcommand: ParsableCommand {
    func execute() throws(CommandFailure)
}

extension FerrySubcommand {
    func run() throws {
        do {
            try execute()
        } catch {
            Terminal.error(error.message)
            throw ExitCode(error.status)
        }
    }
}
