import FerryCore

/// What one start of `ferry-ui` asks for, read from its command line.
///
///     ferry-ui                      the main window (account, recent shares)
///     ferry-ui --share ID           the share dialog for that share
///     ferry-ui --sign-in            the sign-in window
///     ferry-ui --sign-in --share ID sign in, then continue with that share
///
/// `--activation-token TOKEN` overrides XDG_ACTIVATION_TOKEN / DESKTOP_STARTUP_ID.
public struct LaunchRequest: Equatable {
    public enum Window: Equatable {
        case main
        case share(id: String)
        case signIn(shareID: String?)
    }

    public var window: Window
    public var activationToken: String?

    /// `--help`'s text, in the person's language: the option names stay as they are typed.
    public static var usage: String {
        // Descriptions start in this column; a translation's further lines are indented to it.
        let indent = String(repeating: " ", count: 29)
        func option(_ synopsis: String, _ description: String) -> String {
            "  " + synopsis + String(repeating: " ", count: max(1, indent.count - 2 - synopsis.count))
                + description.replacing("\n", with: "\n" + indent)
        }
        return [
            // TRANSLATORS: {command} is how the program is typed, "ferry-ui [--share ID] …"; keep it.
            tr("Usage: {command}", ["command": "ferry-ui [--share ID] [--sign-in] [--activation-token TOKEN]"]),
            "",
            tr("Ferry's windows. The Ferry service starts this when a share needs you."),
            // TRANSLATORS: --help's description of --share ID.
            option("--share ID", tr("the share dialog for share ID")),
            // TRANSLATORS: --help's description of --sign-in; "--share" is the option, keep it.
            option("--sign-in", tr("the sign-in window (with --share, the share continues after it)")),
            option(
                "--activation-token TOKEN",
                // TRANSLATORS: --help's description of --activation-token; a line break starts a line under the first.
                tr("focus token of the launch (default: $XDG_ACTIVATION_TOKEN,\nthen $DESKTOP_STARTUP_ID)")),
        ].joined(separator: "\n")
    }

    public enum Failure: Error, Equatable {
        case help
        case usage(String)
    }

    /// `arguments` without the program name; `environment` is the launching process's.
    public static func parse(
        _ arguments: [String], environment: (String) -> String? = { _ in nil }
    )
        -> Result<LaunchRequest, Failure>
    {
        var shareID: String?
        var signIn = false
        var token: String?
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            var name = argument
            var inlineValue: String?
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            }
            func value() -> String? { inlineValue ?? rest.popFirst() }
            switch name {
            case "--share":
                guard let id = value(), !id.isEmpty, !id.hasPrefix("-") else {
                    return .failure(.usage(tr("--share needs a share id")))
                }
                shareID = id
            case "--sign-in":
                signIn = true
            case "--activation-token":
                guard let value = value() else { return .failure(.usage(tr("--activation-token needs a value"))) }
                token = value
            case "-h", "--help":
                return .failure(.help)
            default:
                // TRANSLATORS: {argument} is what was typed on the command line.
                return .failure(.usage(tr("unknown argument {argument}", ["argument": argument])))
            }
        }
        if token == nil {
            token = [environment("XDG_ACTIVATION_TOKEN"), environment("DESKTOP_STARTUP_ID")]
                .compactMap { $0 }.first { !$0.isEmpty }
        }
        let window: Window = signIn ? .signIn(shareID: shareID) : shareID.map { .share(id: $0) } ?? .main
        return .success(LaunchRequest(window: window, activationToken: token))
    }
}
