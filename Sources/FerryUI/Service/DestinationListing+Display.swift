import FerryContract
import FerryCore

/// How the share dialog shows one of ListDestinations' answers.
extension DestinationListing {
    /// The name to show: the room's name, else its alias, the person, or the id.
    public var displayName: String { [name, alias ?? "", userID ?? ""].first { !$0.isEmpty } ?? id }

    /// The second line of its row, ending with whose room it is when `showingAccount` (the list
    /// holds several accounts' rooms).
    public func detail(showingAccount: Bool) -> String {
        guard showingAccount, let account else { return detail }
        let plain = detail
        if plain.isEmpty { return account }
        // TRANSLATORS: a row's second line in "Share to" with several accounts signed in; {detail} is the rest of
        // the line, "#team:example.org · 3 members", {account} the user id of the account the room is in.
        return tr("{detail} · {account}", ["detail": plain, "account": account])
    }

    /// The second line of its row.
    public var detail: String {
        let plain: String
        let count = members
        switch kind {
        // TRANSLATORS: the second line of a person's row in "Share to"; {user} is a Matrix user id.
        case .person: plain = tr("{user} · new direct chat", ["user": userID ?? id])
        case .direct: plain = userID ?? tr("Direct chat")
        case .room:
            if let alias, alias != displayName {
                // TRANSLATORS: the second line of a room's row in "Share to"; {alias} is its address,
                // "#team:example.org".
                plain = trn("{alias} · {count} member", "{alias} · {count} members", count, ["alias": alias])
            } else {
                plain = members > 0 ? trn("{count} member", "{count} members", count) : (alias ?? "")
            }
        }
        guard encrypted else { return plain }
        if plain.isEmpty { return tr("End-to-end encrypted") }
        // TRANSLATORS: {detail} is the rest of a room's second line, "#team:example.org · 3 members".
        return tr("{detail} · end-to-end encrypted", ["detail": plain])
    }
}
