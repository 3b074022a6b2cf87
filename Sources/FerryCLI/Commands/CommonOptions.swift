import ArgumentParser
import FerryCore

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

/// `--json`: what the listing and status commands print for scripts.
struct OutputOptions: ParsableArguments {
    @Flag(help: ArgumentHelp(tr("Print JSON (stable; documented in docs/CONTRACT.md).")))
    var json = false
}
