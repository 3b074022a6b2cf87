import ArgumentParser
import FerryContract
import FerryCore
import GLibAdapter

/// Where a share goes and whether to wait for it: what `send`, `text` and `complete` all take.
struct DeliveryOptions: ParsableArguments {
    @Option(
        name: .customLong("to"),
        help: ArgumentHelp(
            tr("A room id (!…), room alias (#room:server) or user id (@user:server). Repeat for several."),
            valueName: "DEST"))
    var destinations: [String] = []

    @Flag(help: ArgumentHelp(tr("Return once the share is accepted, without waiting until it is sent.")))
    var noWait = false
}

/// `--account`: which signed-in account a share goes out as.
struct AccountOption: ParsableArguments {
    @Option(
        name: .customLong("account"),
        help: ArgumentHelp(
            tr(
                "The account to send as, by its user id (@me:example.org). Default: for each destination, the account that has joined it."
            ),
            valueName: "USER_ID"))
    var userID: String?

    /// Adds the account to a Share call's options.
    func add(to dict: inout [String: Variant]) {
        if let userID { dict["account"] = .string(userID) }
    }
}

/// `--account` for a command that acts on one account's own (logout, verify): which one is never
/// guessed among several, as the wrong one would lose its device or verify the wrong device.
struct OneAccountOption: ParsableArguments {
    @Option(
        name: .customLong("account"),
        help: ArgumentHelp(
            tr("The account, by its user id; needed when several are signed in."), valueName: "USER_ID"))
    var userID: String?

    /// The account given, or nil when none was and at most one is signed in; with several and
    /// none given, a usage error naming them.
    func resolved(_ client: Share1Client) throws(CommandFailure) -> String? {
        if let userID { return userID }
        // A property read: never waits for a homeserver (GetStatus may, up to 3 seconds).
        let signedIn = try client.accounts()
        guard signedIn.count > 1 else { return nil }
        throw CommandFailure(
            status: ExitStatus.usage,
            message: tr(
                // TRANSLATORS: {accounts} is a list of Matrix user ids; `--account` is an option, as it is.
                "several accounts are signed in ({accounts}); say which with --account.",
                ["accounts": signedIn.joined(separator: ", ")]))
    }
}

/// `--account` on a command that lists (destinations, status): only that account's.
struct ListedAccountOption: ParsableArguments {
    @Option(
        name: .customLong("account"),
        help: ArgumentHelp(tr("Only this account's, by its user id (default: every account's)."), valueName: "USER_ID"))
    var userID: String?

    /// The account given, checked against those signed in: one that is not is a usage error
    /// naming them (an empty list would read as "nothing there").
    func checked(among signedIn: [String]) throws(CommandFailure) -> String? {
        guard let userID, !signedIn.contains(userID) else { return userID }
        throw CommandFailure(
            status: ExitStatus.usage,
            message: signedIn.isEmpty
                // TRANSLATORS: {account} is a Matrix user id.
                ? tr("{account} is not signed in; nobody is.", ["account": userID])
                : tr(
                    // TRANSLATORS: {account} is a Matrix user id, {accounts} a list of them.
                    "{account} is not signed in; signed in: {accounts}.",
                    ["account": userID, "accounts": signedIn.joined(separator: ", ")]))
    }
}

/// `--json`: what the listing and status commands print for scripts.
struct OutputOptions: ParsableArguments {
    @Flag(help: ArgumentHelp(tr("Print JSON (stable; documented in docs/CONTRACT.md).")))
    var json = false
}
