import ArgumentParser
import FerryContract
import FerryCore

struct SharesCommand: FerrySubcommand {
    static let configuration = CommandConfiguration(
        commandName: "shares", abstract: tr("List shares, newest first."))

    @OptionGroup var output: OutputOptions

    func execute() throws(CommandFailure) {
        let shares = try Share1Client.forCommand().run(Share1.listShares())
        if output.json {
            Terminal.output(ShareJSON.array(shares))
        } else if shares.isEmpty {
            Terminal.note(tr("No shares yet."))
        } else {
            Terminal.output(ShareFormatter.table(shares))
        }
    }
}

struct ShowCommand: FerrySubcommand {
    static let configuration = CommandConfiguration(
        commandName: "show", abstract: tr("Show one share."))

    @Argument(help: ArgumentHelp(tr("A share id, or a unique beginning of one."), valueName: "ID"))
    var id: String

    @OptionGroup var output: OutputOptions

    func execute() throws(CommandFailure) {
        let client = try Share1Client.forCommand()
        let share = try client.run(Share1.getShare(try client.resolve(id)))
        Terminal.output(output.json ? ShareJSON.object(share) : ShareFormatter.details(share))
    }
}

struct DestinationsCommand: FerrySubcommand {
    static let configuration = CommandConfiguration(
        commandName: "destinations", abstract: tr("Rooms, direct chats and people to share to, recent ones first."))

    @Argument(help: ArgumentHelp(tr("Only those whose name, alias or user id contains this.")))
    var query: String = ""

    @Option(help: ArgumentHelp(tr("Show at most this many.")))
    var limit: UInt32 = 0

    @OptionGroup var account: ListedAccountOption

    @OptionGroup var output: OutputOptions

    func execute() throws(CommandFailure) {
        let client = try Share1Client.forCommand()
        var list: [DestinationListing]
        if account.userID != nil {
            let only = try account.checked(among: client.accounts())
            // Every account's list, then this account's part of it, at most `limit` of them.
            list = try client.run(Share1.listDestinations(query, limit: 0)).filter { $0.account == only }
            if limit > 0 { list = Array(list.prefix(Int(limit))) }
        } else {
            list = try client.run(Share1.listDestinations(query, limit: limit))
        }
        Terminal.output(output.json ? DestinationJSON.array(list) : DestinationJSON.table(list))
    }
}

struct AccountsCommand: FerrySubcommand {
    static let configuration = CommandConfiguration(
        commandName: "accounts", abstract: tr("The accounts signed in, each with its device and whether it is online."))

    @OptionGroup var output: OutputOptions

    func execute() throws(CommandFailure) {
        let accounts = try Share1Client.forCommand().run(Share1.getStatus()).accounts
        Terminal.output(output.json ? AccountJSON.array(accounts) : AccountJSON.text(accounts))
    }
}
