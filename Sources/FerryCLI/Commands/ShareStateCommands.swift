import ArgumentParser
import FerryContract
import FerryCore

// Commands that change one share: cancel it, send it again, or say where it goes.

struct CancelCommand: FerrySubcommand {
    static let configuration = CommandConfiguration(
        commandName: "cancel", abstract: tr("Cancel a share that is not sent yet; its copies are removed."))

    @Argument(help: ArgumentHelp(tr("A share id, or a unique beginning of one."), valueName: "ID"))
    var id: String

    func execute() throws(CommandFailure) {
        let client = try Share1Client.forCommand()
        let resolved = try client.resolve(id)
        try client.run(Share1.cancel(resolved))
        // TRANSLATORS: {id} is a share's id.
        Terminal.note(tr("Cancelled {id}.", ["id": resolved]))
    }
}

struct RetryCommand: FerrySubcommand {
    static let configuration = CommandConfiguration(
        commandName: "retry",
        abstract: tr("Send a failed share again; destinations that have it are not sent to twice."))

    @Argument(help: ArgumentHelp(tr("The share's id, or a unique prefix of it.")))
    var id: String

    func execute() throws(CommandFailure) {
        let client = try Share1Client.forCommand()
        let resolved = try client.resolve(id)
        try client.run(Share1.retry(resolved))
        // TRANSLATORS: {id} is a share's id.
        Terminal.note(tr("Trying {id} again.", ["id": resolved]))
    }
}

struct CompleteCommand: FerrySubcommand {
    static let configuration = CommandConfiguration(
        commandName: "complete",
        abstract: tr("Choose where a share that waits for a destination goes (what the share dialog does)."))

    @Argument(help: ArgumentHelp(tr("The share's id, or a unique prefix of it.")))
    var id: String

    @OptionGroup var delivery: DeliveryOptions

    @OptionGroup var account: AccountOption

    @Option(help: ArgumentHelp(tr("A message to send with it (default: the share's own).")))
    var message: String = ""

    func execute() throws(CommandFailure) {
        guard !delivery.destinations.isEmpty else {
            throw CommandFailure(status: ExitStatus.usage, message: tr("say where with --to (see ferry destinations)."))
        }
        let client = try Share1Client.forCommand()
        let resolved = try client.resolve(id)
        let destinations = delivery.destinations
        if account.userID == nil { try DestinationOwnership.check(destinations, client: client) }
        try client.run(
            Share1.completeShare(
                resolved, destinations: destinations, message: message,
                accounts: account.userID.map { user in destinations.map { _ in user } }))
        if delivery.noWait {
            // TRANSLATORS: {id} is a share's id.
            Terminal.note(tr("Queued {id}.", ["id": resolved]))
        } else {
            try DeliveryWatch(client: client, shareID: resolved).waitUntilDone()
        }
    }
}
