import ArgumentParser
import FerryCore

struct SharesCommand: FerrySubcommand {
    static let configuration = CommandConfiguration(
        commandName: "shares", abstract: "List shares, newest first.")

    @Flag(help: "Print JSON (stable; see docs/CONTRACT.md).")
    var json = false

    func execute() throws(CommandFailure) {
        let shares = try ServiceClient().shares()
        if json {
            Terminal.output(ShareJSON.array(shares))
        } else if shares.isEmpty {
            Terminal.note("No shares yet.")
        } else {
            Terminal.output(ShareFormatter.table(shares))
        }
    }
}

struct ShowCommand: FerrySubcommand {
    static let configuration = CommandConfiguration(
        commandName: "show", abstract: "Show one share.")

    @Argument(help: ArgumentHelp("A share id, or a unique beginning of one.", valueName: "ID"))
    var id: String

    @Flag(help: "Print JSON (stable; see docs/CONTRACT.md).")
    var json = false

    func execute() throws(CommandFailure) {
        let client = try ServiceClient()
        let share = try client.share(id: try client.resolve(id))
        Terminal.output(json ? ShareJSON.object(share) : ShareFormatter.details(share))
    }
}

struct CancelCommand: FerrySubcommand {
    static let configuration = CommandConfiguration(
        commandName: "cancel", abstract: "Cancel a share that is not sent yet; its copies are removed.")

    @Argument(help: ArgumentHelp("A share id, or a unique beginning of one.", valueName: "ID"))
    var id: String

    func execute() throws(CommandFailure) {
        let client = try ServiceClient()
        let resolved = try client.resolve(id)
        try client.cancel(id: resolved)
        Terminal.note("Cancelled \(resolved).")
    }
}
