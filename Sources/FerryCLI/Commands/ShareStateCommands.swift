import ArgumentParser
import FerryContract
import FerryCore

// Commands that change one share: cancel it, send it again, or say where it goes.

struct CancelCommand: FerrySubcommand {
    static let configuration = CommandConfiguration(
        commandName: "cancel", abstract: "Cancel a share that is not sent yet; its copies are removed.")

    @Argument(help: ArgumentHelp("A share id, or a unique beginning of one.", valueName: "ID"))
    var id: String

    func execute() throws(CommandFailure) {
        let client = try Share1Client.forCommand()
        let resolved = try client.resolve(id)
        try client.run(Share1.cancel(resolved))
        Terminal.note("Cancelled \(resolved).")
    }
}

struct RetryCommand: FerrySubcommand {
    static let configuration = CommandConfiguration(
        commandName: "retry", abstract: "Send a failed share again; destinations that have it are not sent to twice.")

    @Argument(help: "The share's id, or a unique prefix of it.")
    var id: String

    func execute() throws(CommandFailure) {
        let client = try Share1Client.forCommand()
        let resolved = try client.resolve(id)
        try client.run(Share1.retry(resolved))
        Terminal.note("Trying \(resolved) again.")
    }
}

struct CompleteCommand: FerrySubcommand {
    static let configuration = CommandConfiguration(
        commandName: "complete",
        abstract: "Choose where a share that waits for a destination goes (what the share dialog does).")

    @Argument(help: "The share's id, or a unique prefix of it.")
    var id: String

    @OptionGroup var delivery: DeliveryOptions

    @Option(help: "A message to send with it (default: the share's own).")
    var message: String = ""

    func execute() throws(CommandFailure) {
        guard !delivery.destinations.isEmpty else {
            throw CommandFailure(status: ExitStatus.usage, message: "say where with --to (see ferry destinations).")
        }
        let client = try Share1Client.forCommand()
        let resolved = try client.resolve(id)
        try client.run(Share1.completeShare(resolved, destinations: delivery.destinations, message: message))
        if delivery.noWait {
            Terminal.note("Queued \(resolved).")
        } else {
            try DeliveryWatch(client: client, shareID: resolved).waitUntilDone()
        }
    }
}
