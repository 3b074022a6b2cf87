import ArgumentParser
import FerryContract
import FerryCore
import GLibAdapter
#if canImport(Glibc)
import Glibc
#endif

struct LoginCommand: FerrySubcommand {
    static let configuration = CommandConfiguration(
        commandName: "login",
        abstract: "Sign in to a Matrix account.",
        discussion: """
        Shares made while signed out are sent once you sign in. On a terminal Ferry asks for what \
        is missing (the password without echo); in scripts pass the secret on standard input.
        """)

    @Option(help: ArgumentHelp("A server name (example.org) or URL (https://matrix.example.org). Default: the server of --user.", valueName: "H"))
    var homeserver: String?

    @Option(help: ArgumentHelp("Your user id (@me:example.org) or user name.", valueName: "U"))
    var user: String?

    @Flag(help: "Read the password from standard input.")
    var passwordStdin = false

    @Flag(help: "Read an access token from standard input instead of a password.")
    var accessTokenStdin = false

    @Flag(help: "Sign in through the browser (single sign-on).")
    var sso = false

    func validate() throws {
        if [passwordStdin, accessTokenStdin, sso].filter({ $0 }).count > 1 {
            throw ValidationError("Choose one of --password-stdin, --access-token-stdin and --sso.")
        }
    }

    func execute() throws(CommandFailure) {
        var user = self.user
        var credentials: [String: Variant] = [:]
        if accessTokenStdin {
            credentials["access-token"] = .string(try Self.secretFromStandardInput("access token"))
        } else if sso {
            credentials["sso"] = .bool(true)
        } else {
            if user == nil { user = try Prompt.line("User (@me:example.org): ") }
            credentials["user"] = .string(user!)
            credentials["password"] = .string(passwordStdin ? try Self.secretFromStandardInput("password")
                                                             : try Prompt.secret("Password: "))
        }
        guard let server = homeserver ?? user.flatMap(Self.serverName) ?? (try? Prompt.line("Homeserver: ")) else {
            throw CommandFailure(status: ExitStatus.usage, message: "say which homeserver with --homeserver.")
        }
        credentials["homeserver"] = .string(server)
        let account = try Share1Client.forCommand().run(Share1.signIn(credentials))
        Terminal.note("Signed in as \(account["user-id"]?.stringValue ?? "?") on \(account["homeserver"]?.stringValue ?? server).")
    }

    /// The server part of a user id: `@me:example.org` → `example.org`.
    static func serverName(of user: String) -> String? {
        guard user.hasPrefix("@"), let colon = user.firstIndex(of: ":") else { return nil }
        let server = user[user.index(after: colon)...]
        return server.isEmpty ? nil : String(server)
    }

    static func secretFromStandardInput(_ what: String) throws(CommandFailure) -> String {
        guard let text = StandardInput.readAllUTF8() else {
            throw CommandFailure(status: ExitStatus.dataError, message: "the \(what) on standard input is not valid UTF-8.")
        }
        // One line ending goes, whichever kind (Swift's "\r\n" is one Character).
        let secret = text.hasSuffix("\n") || text.hasSuffix("\r\n") ? String(text.dropLast()) : text
        guard !secret.isEmpty else { throw CommandFailure(status: ExitStatus.dataError, message: "no \(what) on standard input.") }
        return secret
    }
}

struct LogoutCommand: FerrySubcommand {
    static let configuration = CommandConfiguration(
        commandName: "logout", abstract: "Sign out; shares not yet sent wait for the next sign-in.")

    func execute() throws(CommandFailure) {
        try Share1Client.forCommand().run(Share1.signOut())
        Terminal.note("Signed out.")
    }
}

struct StatusCommand: FerrySubcommand {
    static let configuration = CommandConfiguration(
        commandName: "status", abstract: "Who is signed in, where, online or not, and shares by state.")

    @OptionGroup var output: OutputOptions

    func execute() throws(CommandFailure) {
        let status = try Share1Client.forCommand().run(Share1.getStatus())
        if output.json {
            Terminal.output(StatusJSON.object(status))
        } else {
            Terminal.output(StatusJSON.text(status))
        }
    }
}

/// Asking a person at a terminal.
enum Prompt {
    static func line(_ question: String) throws(CommandFailure) -> String {
        guard isatty(0) != 0 else {
            throw CommandFailure(status: ExitStatus.usage, message: "not on a terminal: give it as an option (see ferry login --help).")
        }
        Terminal.standardError(question)
        guard let answer = readLine(), !answer.isEmpty else {
            throw CommandFailure(status: ExitStatus.usage, message: "nothing given.")
        }
        return answer
    }

    /// Reads a line with echo off, so the password never shows on the screen.
    static func secret(_ question: String, notOnTerminal: String = "not on a terminal: use --password-stdin.") throws(CommandFailure) -> String {
        guard isatty(0) != 0 else {
            throw CommandFailure(status: ExitStatus.usage, message: notOnTerminal)
        }
        var saved = termios()
        tcgetattr(0, &saved)
        var quiet = saved
        quiet.c_lflag &= ~tcflag_t(ECHO)
        tcsetattr(0, TCSAFLUSH, &quiet)
        Terminal.standardError(question)
        let answer = readLine()
        tcsetattr(0, TCSAFLUSH, &saved)
        Terminal.standardError("\n")
        guard let answer, !answer.isEmpty else { throw CommandFailure(status: ExitStatus.usage, message: "nothing given.") }
        return answer
    }
}
