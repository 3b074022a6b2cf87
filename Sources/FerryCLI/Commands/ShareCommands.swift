import ArgumentParser
import FerryContract
import FerryCore
import GLibAdapter
#if canImport(Glibc)
import Glibc
#endif

struct OpenCommand: FerrySubcommand {
    static let configuration = CommandConfiguration(
        commandName: "open",
        // TRANSLATORS: "Open with Ferry": Ferry chosen in a file manager's Open With menu.
        abstract: tr("Share URIs or files as one share (what \"Open with Ferry\" runs)."),
        // TRANSLATORS: file:// and ferry:share?text=…&url=…&title=… are written as they are.
        discussion: tr("URIs may be file://, any location GIO can read here, or ferry:share?text=…&url=…&title=…"))

    @Argument(help: ArgumentHelp(tr("URIs or paths to share."), valueName: "URI"))
    var uris: [String]

    @OptionGroup var account: AccountOption

    func execute() throws(CommandFailure) {
        guard !uris.isEmpty else { throw CommandFailure(ShareError.emptyShare) }
        let resolved = try uris.map { argument throws(CommandFailure) in
            SharePlan.uriScheme(argument) == nil ? try LocalPath.uri(for: argument) : argument
        }
        var dict: [String: Variant] = ["uris": .strings(resolved)]
        account.add(to: &dict)
        try ShareSubmission.submit(dict)
    }
}

struct SendCommand: FerrySubcommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: tr("Share files, with an optional message."),
        discussion: tr("Each file is copied before this returns, so you may move or delete it afterwards."))

    @Argument(
        help: ArgumentHelp(tr("Files to share; relative paths are from the current directory."), valueName: "FILE"))
    var files: [String]

    @OptionGroup var delivery: DeliveryOptions

    @Option(help: ArgumentHelp(tr("A message: the caption of a single file, or sent before several files.")))
    var message: String?

    @OptionGroup var account: AccountOption

    func execute() throws(CommandFailure) {
        guard !files.isEmpty else { throw CommandFailure(ShareError.emptyShare) }
        let uris = try files.map { path throws(CommandFailure) in try LocalPath.uri(for: path) }
        var dict: [String: Variant] = ["uris": .strings(uris)]
        if !delivery.destinations.isEmpty { dict["destinations"] = .strings(delivery.destinations) }
        if let message { dict["message"] = .string(message) }
        account.add(to: &dict)
        try ShareSubmission.submit(dict, wait: !delivery.noWait)
    }
}

struct TextCommand: FerrySubcommand {
    static let configuration = CommandConfiguration(
        commandName: "text",
        abstract: tr("Share a text, or a link when the text is a single URL."))

    @Argument(help: ArgumentHelp(tr("The text; - reads it from standard input."), valueName: "TEXT"))
    var text: String

    @OptionGroup var delivery: DeliveryOptions

    @Option(help: ArgumentHelp(tr("A subject or title kept with the share.")))
    var subject: String?

    @OptionGroup var account: AccountOption

    func execute() throws(CommandFailure) {
        var words = text
        if text == "-" {
            guard let input = StandardInput.readAllUTF8() else {
                throw CommandFailure(
                    status: ExitStatus.dataError, message: tr("standard input is not valid UTF-8 text."))
            }
            words = input
        }
        var dict: [String: Variant] = ["text": .string(words)]
        if !delivery.destinations.isEmpty { dict["destinations"] = .strings(delivery.destinations) }
        if let subject { dict["subject"] = .string(subject) }
        account.add(to: &dict)
        try ShareSubmission.submit(dict, wait: !delivery.noWait)
    }
}

/// Sends a Share call and reports the new share: its id on standard output, what happens next on standard error.
enum ShareSubmission {
    /// With `wait`, a queued share is followed until it is sent or failed (DeliveryWatch).
    static func submit(_ dict: [String: Variant], wait: Bool = false) throws(CommandFailure) {
        var dict = dict
        dict["source"] = .string("cli") // ignored by older services: unknown keys are
        let client = try Share1Client.forCommand()
        if dict["account"] == nil, let destinations = dict["destinations"]?.stringsValue {
            try DestinationOwnership.check(destinations, client: client)
        }
        let id = try client.run(Share1.share(dict))
        Terminal.output(id)
        guard let share = try? client.run(Share1.getShare(id)) else { return }
        guard wait, share.state == .queued || share.state == .sending else {
            Terminal.note(ShareFormatter.nextStep(for: share))
            return
        }
        try DeliveryWatch(client: client, shareID: id).waitUntilDone()
    }
}

/// Which account a destination named with `--to` goes out as, when several are signed in and
/// `--account` names none: the one account that has joined it. The command asks for every
/// account's list (which also tells the service which account has which room) and refuses a
/// destination that several accounts have (a usage error naming them) rather than guess.
/// Offline, with no list to be had, the share is made anyway (it is kept and sent later, each
/// destination as the service decides then): a share made offline is never refused for it.
enum DestinationOwnership {
    static func check(_ destinations: [String], client: Share1Client) throws(CommandFailure) {
        guard !destinations.isEmpty, try client.accounts().count > 1,
            let listed = try? client.run(Share1.listDestinations("", limit: 0))
        else { return }
        for destination in destinations {
            let owners = listed.filter { [$0.id, $0.alias, $0.userID].contains(destination) }.compactMap(\.account)
            let distinct = Array(Set(owners)).sorted()
            guard distinct.count > 1 else { continue }
            throw CommandFailure(
                status: ExitStatus.usage,
                message: tr(
                    // TRANSLATORS: {destination} is a room or person as given with --to; {accounts} a list of Matrix
                    // user ids; `--account` is an option, as it is.
                    "{destination} is in the rooms of several accounts ({accounts}); say which with --account.",
                    [
                        "destination": SafeDisplay.escaped(destination),
                        "accounts": distinct.joined(separator: ", "),
                    ]))
        }
    }
}

/// Paths given on the command line, as the caller meant them.
enum LocalPath {
    /// A file:// URI for the path, resolved against the caller's working directory. The service
    /// never sees a relative path: it runs elsewhere, with another working directory.
    static func uri(for path: String) throws(CommandFailure) -> String {
        var absolute = path
        if !path.hasPrefix("/") {
            guard let cwd = getcwd(nil, 0) else {
                throw CommandFailure(status: ExitStatus.software, message: tr("cannot tell the current directory"))
            }
            defer { free(cwd) }
            absolute = String(cString: cwd) + "/" + path
        }
        guard let uri = FileURI.uri(forPath: absolute) else {
            throw CommandFailure(
                status: ExitStatus.dataError,
                // TRANSLATORS: {path} is a path given on the command line, in quotes.
                message: tr("{path} is not a usable path.", ["path": SafeDisplay.quoted(path)]))
        }
        return uri
    }
}

enum StandardInput {
    static func readAllUTF8() -> String? {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            bytes += buffer[0..<count]
        }
        return String(validating: bytes, as: UTF8.self)
    }
}
