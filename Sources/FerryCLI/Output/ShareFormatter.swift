import FerryCore

/// Shares as a person reads them in a terminal. Every name and text from a share goes through
/// `SafeDisplay`, so a file name cannot move the cursor, fake a line or reverse the text.
///
/// The state and the source stay the raw words of the contract (`awaiting-sign-in`, `cli`): the
/// table's STATE column is what scripts pick out, and `--json` says the same.
enum ShareFormatter {
    static func table(_ shares: [Share]) -> String {
        var lines = [
            row(
                // TRANSLATORS: column headings of `ferry shares`, in capitals as is usual for a terminal table.
                trc("shares table", "ID"), trc("shares table", "STATE"), trc("shares table", "CREATED"),
                trc("shares table", "WHAT"))
        ]
        for share in shares {
            lines.append(
                row(share.id, share.state.rawValue, Timestamp.readable(microseconds: share.created), summary(share)))
        }
        return lines.joined(separator: "\n")
    }

    static func details(_ share: Share) -> String {
        let labels = (
            // TRANSLATORS: labels of `ferry show`, each followed by a value; the values line up after the longest
            // label.
            state: trc("share details", "State:"), what: trc("share details", "What:"),
            subject: trc("share details", "Subject:"), message: trc("share details", "Message:"),
            to: trc("share details", "To:"), from: trc("share details", "From:"),
            account: trc("share details", "As:"), error: trc("share details", "Error:")
        )
        let width =
            [
                labels.state, labels.what, labels.subject, labels.message, labels.to, labels.from, labels.account,
                labels.error,
            ].map(\.count).max()! + 2
        func line(_ label: String, _ value: String) -> String { "  " + pad(label, width) + value }

        // TRANSLATORS: the first line of `ferry show`; {id} is the share's id.
        var lines = [tr("Share {id}", ["id": share.id]), line(labels.state, share.state.rawValue)]
        lines.append(line(labels.what, "\(summary(share)) (\(share.intent.contentType))"))
        for (index, item) in share.intent.items.enumerated() where share.intent.items.count > 1 || item.kind == .file {
            let size = item.kind == .file ? "  " + ByteCount.format(item.size) : ""
            lines.append("    \(index + 1). \(SafeDisplay.escaped(item.name))  \(item.contentType)\(size)")
        }
        if let subject = share.intent.subject { lines.append(line(labels.subject, SafeDisplay.escaped(subject))) }
        if let message = share.intent.message { lines.append(line(labels.message, SafeDisplay.escaped(message))) }
        let destinations = share.intent.destinations.enumerated().map { position, destination in
            let shown = SafeDisplay.escaped(destination)
            guard !share.destinationAccounts.isEmpty, let account = share.account(at: position) else { return shown }
            // TRANSLATORS: `ferry show`, a destination of a share to several accounts' rooms; {account} is the
            // Matrix user id it goes out as.
            return tr("{destination} (as {account})", ["destination": shown, "account": SafeDisplay.escaped(account)])
        }.joined(separator: ", ")
        // TRANSLATORS: `ferry show`, where a share goes when nobody said yet.
        lines.append(line(labels.to, destinations.isEmpty ? tr("(not chosen yet)") : destinations))
        lines.append(
            line(labels.from, "\(share.intent.source.rawValue), \(Timestamp.readable(microseconds: share.created))"))
        if let awaited = share.awaitedAccount {
            let shown = share.accounts.map(SafeDisplay.escaped).joined(separator: ", ")
            lines.append(
                line(
                    labels.account,
                    share.state == .awaitingSignIn
                        // TRANSLATORS: `ferry show`; {account} is a Matrix user id (@me:example.org).
                        ? tr(
                            "{account} (waiting for this account to sign in)", ["account": SafeDisplay.escaped(awaited)]
                        )
                        : shown))
        }
        if let failure = share.failure { lines.append(line(labels.error, SafeDisplay.escaped(failure.message))) }
        return lines.joined(separator: "\n")
    }

    /// One sentence on what happens to a new share next.
    static func nextStep(for share: Share) -> String {
        // The summaries are pieces of these sentences (“photo.png”, the link “…”, 3 files).
        let what = summary(share)
        switch share.state {
        case .awaitingSignIn:
            guard let account = share.awaitedAccount else {
                // TRANSLATORS: {what} is what was shared: a quoted file name, "the link …", "a text …" or "3 files".
                return tr("Shared {what}; it will be sent once you sign in.", ["what": what])
            }
            return tr(
                // TRANSLATORS: {what} is what was shared; {account} is a Matrix user id (@me:example.org).
                "Shared {what}; it will be sent once you sign in as {account}.",
                ["what": what, "account": SafeDisplay.escaped(account)])
        // TRANSLATORS: {what} is what was shared: a quoted file name, "the link …", "a text …" or "3 files".
        case .awaitingDestination: return tr("Shared {what}; choose where to send it.", ["what": what])
        // TRANSLATORS: {what} is what was shared: a quoted file name, "the link …", "a text …" or "3 files".
        case .queued, .sending: return tr("Shared {what}; sending.", ["what": what])
        // TRANSLATORS: {what} is what was shared: a quoted file name, "the link …", "a text …" or "3 files".
        case .sent: return tr("Sent {what}.", ["what": what])
        case .failed:
            let reason = share.failure?.message ?? tr("unknown error")
            // TRANSLATORS: {what} is what was shared; {reason} is why it was not sent, a sentence from the service.
            return tr("Could not send {what}: {reason}", ["what": what, "reason": reason])
        // TRANSLATORS: {what} is what was shared: a quoted file name, "the link …", "a text …" or "3 files".
        case .cancelled: return tr("Cancelled {what}.", ["what": what])
        }
    }

    /// What a share holds, as a piece of a sentence or the table's WHAT column.
    static func summary(_ share: Share) -> String {
        let items = share.intent.items
        if items.count == 1 {
            let item = items[0]
            switch item.kind {
            case .file: return SafeDisplay.quoted(item.name)
            // TRANSLATORS: goes into sentences such as "Shared {what}; sending."; {link} is the address, in quotes.
            case .link: return tr("the link {link}", ["link": SafeDisplay.quoted(item.name)])
            case .text:
                return tr(
                    // TRANSLATORS: goes into sentences such as "Shared {what}; sending."; {text} is its beginning, in
                    // quotes.
                    "a text {text}",
                    ["text": SafeDisplay.quoted(String(item.name.prefix(40)) + (item.name.count > 40 ? "…" : ""))])
            }
        }
        // TRANSLATORS: goes into sentences such as "Shared {what}; sending.", and the WHAT column of `ferry shares`.
        return trn("{count} file", "{count} files", items.count)
    }

    private static func row(_ id: String, _ state: String, _ created: String, _ what: String) -> String {
        [pad(id, 26), pad(state, 20), pad(created, 20), what].joined(separator: "  ")
    }

    private static func pad(_ text: String, _ width: Int) -> String {
        text + String(repeating: " ", count: max(0, width - text.count))
    }
}
