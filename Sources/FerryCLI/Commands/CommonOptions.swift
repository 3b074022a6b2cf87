import ArgumentParser
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
            tr("The account to send as, by its user id (@me:example.org). Default: the one signed in last."),
            valueName: "USER_ID"))
    var userID: String?

    /// Adds the account to a Share call's options.
    func add(to dict: inout [String: Variant]) {
        if let userID { dict["account"] = .string(userID) }
    }
}

/// `--json`: what the listing and status commands print for scripts.
struct OutputOptions: ParsableArguments {
    @Flag(help: ArgumentHelp(tr("Print JSON (stable; documented in docs/CONTRACT.md).")))
    var json = false
}
