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
        abstract: tr("Sign in to a Matrix account."),
        discussion: tr(
            "Shares made while signed out are sent once you sign in. On a terminal Ferry asks for what is missing (the password without echo); in scripts pass the secret on standard input."
        ))

    @Option(
        help: ArgumentHelp(
            tr("A server name (example.org) or URL (https://matrix.example.org). Default: the server of --user."),
            valueName: "H"))
    var homeserver: String?

    @Option(help: ArgumentHelp(tr("Your user id (@me:example.org) or user name."), valueName: "U"))
    var user: String?

    @Flag(help: ArgumentHelp(tr("Read the password from standard input.")))
    var passwordStdin = false

    @Flag(help: ArgumentHelp(tr("Read an access token from standard input instead of a password.")))
    var accessTokenStdin = false

    @Flag(help: ArgumentHelp(tr("Sign in through the browser (the homeserver's own sign-in page).")))
    var sso = false

    @Flag(
        help: ArgumentHelp(
            tr("Create an account on the homeserver's page in the browser, where it offers that, and sign in with it."))
    )
    var createAccount = false

    func validate() throws {
        if [passwordStdin, accessTokenStdin, sso || createAccount].filter({ $0 }).count > 1 {
            throw ValidationError(
                tr("Choose one of --password-stdin, --access-token-stdin and --sso (or --create-account)."))
        }
        if createAccount, user != nil {
            // TRANSLATORS: --create-account and --user are the command's options, as they are.
            throw ValidationError(tr("--create-account makes the account on the homeserver's page; leave out --user."))
        }
    }

    func execute() throws(CommandFailure) {
        var user = self.user
        let method: SignInRequest.Method
        if accessTokenStdin {
            method = .accessToken(try Self.secretFromStandardInput(.accessToken))
        } else if sso || createAccount {
            method = .browser(createAccount: createAccount)
        } else {
            // TRANSLATORS: a question on the terminal; the answer is typed after it, on the same line.
            if user == nil { user = try Prompt.line(tr("User (@me:example.org): ")) }
            method = .password(
                user: user!,
                password: passwordStdin
                    ? try Self.secretFromStandardInput(.password)
                    // TRANSLATORS: a question on the terminal; the answer is typed after it, on the same line.
                    : try Prompt.secret(tr("Password: ")))
        }
        // TRANSLATORS: a question on the terminal; the answer is typed after it, on the same line.
        guard let server = homeserver ?? user.flatMap(Self.serverName) ?? (try? Prompt.line(tr("Homeserver: "))) else {
            throw CommandFailure(status: ExitStatus.usage, message: tr("say which homeserver with --homeserver."))
        }
        let account = try Share1Client.forCommand().run(
            Share1.signIn(SignInRequest(homeserver: server, method: method)))
        Terminal.note(
            tr(
                // TRANSLATORS: {user} is a Matrix user id (@me:example.org), {homeserver} a server name or URL.
                "Signed in as {user} on {homeserver}.",
                [
                    "user": account.userID.isEmpty ? "?" : account.userID,
                    "homeserver": account.homeserver.isEmpty ? server : account.homeserver,
                ]))
    }

    /// The server part of a user id: `@me:example.org` → `example.org`.
    static func serverName(of user: String) -> String? { Destination.serverName(ofUser: user) }

    static func secretFromStandardInput(_ what: StandardInputSecret) throws(CommandFailure) -> String {
        guard let text = StandardInput.readAllUTF8() else {
            throw CommandFailure(status: ExitStatus.dataError, message: what.notUTF8)
        }
        // One line ending goes, whichever kind (Swift's "\r\n" is one Character).
        let secret = text.hasSuffix("\n") || text.hasSuffix("\r\n") ? String(text.dropLast()) : text
        guard !secret.isEmpty else { throw CommandFailure(status: ExitStatus.dataError, message: what.missing) }
        return secret
    }
}

/// A secret a script gives on standard input, and the sentences about it: whole sentences, so a
/// translation need not fit the name of the secret into a sentence made for another.
enum StandardInputSecret {
    case accessToken, password, passphrase, keyOrPassphrase

    var notUTF8: String {
        switch self {
        case .accessToken: tr("the access token on standard input is not valid UTF-8.")
        case .password: tr("the password on standard input is not valid UTF-8.")
        case .passphrase: tr("the passphrase on standard input is not valid UTF-8.")
        case .keyOrPassphrase: tr("the recovery key or passphrase on standard input is not valid UTF-8.")
        }
    }

    var missing: String {
        switch self {
        case .accessToken: tr("no access token on standard input.")
        case .password: tr("no password on standard input.")
        case .passphrase: tr("no passphrase on standard input.")
        case .keyOrPassphrase: tr("no recovery key or passphrase on standard input.")
        }
    }
}

struct LogoutCommand: FerrySubcommand {
    static let configuration = CommandConfiguration(
        commandName: "logout", abstract: tr("Sign out; shares not yet sent wait for the next sign-in."))

    @OptionGroup var one: OneAccountOption

    func execute() throws(CommandFailure) {
        let client = try Share1Client.forCommand()
        let account = try one.resolved(client)
        try client.run(Share1.signOut(account: account))
        // TRANSLATORS: {user} is a Matrix user id.
        Terminal.note(account.map { tr("Signed out of {user}.", ["user": $0]) } ?? tr("Signed out."))
    }
}

struct StatusCommand: FerrySubcommand {
    static let configuration = CommandConfiguration(
        commandName: "status", abstract: tr("Who is signed in, where, online or not, and shares by state."))

    @OptionGroup var account: ListedAccountOption

    @OptionGroup var output: OutputOptions

    func execute() throws(CommandFailure) {
        var status = try Share1Client.forCommand().run(Share1.getStatus())
        if let only = try account.checked(among: status.accounts.map(\.userID)) {
            status = status.speaking(as: only)
        }
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
            throw CommandFailure(
                status: ExitStatus.usage,
                message: tr("not on a terminal: give it as an option (see ferry login --help)."))
        }
        Terminal.standardError(question)
        guard let answer = readLine(), !answer.isEmpty else {
            throw CommandFailure(status: ExitStatus.usage, message: tr("nothing given."))
        }
        return answer
    }

    /// Reads a line with echo off, so the password never shows on the screen.
    static func secret(
        _ question: String, notOnTerminal: String = tr("not on a terminal: use --password-stdin.")
    ) throws(CommandFailure) -> String {
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
        guard let answer, !answer.isEmpty else {
            throw CommandFailure(status: ExitStatus.usage, message: tr("nothing given."))
        }
        return answer
    }
}
