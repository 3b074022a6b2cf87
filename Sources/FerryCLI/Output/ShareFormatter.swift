import FerryCore

/// Shares as a person reads them in a terminal. Every name and text from a share goes through
/// `SafeDisplay`, so a file name cannot move the cursor, fake a line or reverse the text.
enum ShareFormatter {
    static func table(_ shares: [Share]) -> String {
        var lines = [row("ID", "STATE", "CREATED", "WHAT")]
        for share in shares {
            lines.append(row(share.id, share.state.rawValue, Timestamp.readable(microseconds: share.created), summary(share)))
        }
        return lines.joined(separator: "\n")
    }

    static func details(_ share: Share) -> String {
        var lines = ["Share \(share.id)", "  State:    \(share.state.rawValue)"]
        lines.append("  What:     \(summary(share)) (\(share.intent.contentType))")
        for (index, item) in share.intent.items.enumerated() where share.intent.items.count > 1 || item.kind == .file {
            let size = item.kind == .file ? "  " + ByteCount.format(item.size) : ""
            lines.append("    \(index + 1). \(SafeDisplay.escaped(item.name))  \(item.contentType)\(size)")
        }
        if let subject = share.intent.subject { lines.append("  Subject:  \(SafeDisplay.escaped(subject))") }
        if let message = share.intent.message { lines.append("  Message:  \(SafeDisplay.escaped(message))") }
        let destinations = share.intent.destinations.map(SafeDisplay.escaped).joined(separator: ", ")
        lines.append("  To:       \(destinations.isEmpty ? "(not chosen yet)" : destinations)")
        lines.append("  From:     \(share.intent.source.rawValue), \(Timestamp.readable(microseconds: share.created))")
        if let account = share.account {
            let waiting = share.state == .awaitingSignIn ? " (waiting for this account to sign in)" : ""
            lines.append("  As:       \(SafeDisplay.escaped(account))\(waiting)")
        }
        if let failure = share.failure { lines.append("  Error:    \(SafeDisplay.escaped(failure.message))") }
        return lines.joined(separator: "\n")
    }

    /// One sentence on what happens to a new share next.
    static func nextStep(for share: Share) -> String {
        switch share.state {
        case .awaitingSignIn:
            let who = share.account.map { " as " + SafeDisplay.escaped($0) } ?? ""
            return "Shared \(summary(share)); it will be sent once you sign in\(who)."
        case .awaitingDestination: return "Shared \(summary(share)); choose where to send it."
        case .queued, .sending: return "Shared \(summary(share)); sending."
        case .sent: return "Sent \(summary(share))."
        case .failed: return "Could not send \(summary(share)): \(share.failure?.message ?? "unknown error")"
        case .cancelled: return "Cancelled \(summary(share))."
        }
    }

    static func summary(_ share: Share) -> String {
        let items = share.intent.items
        if items.count == 1 {
            let item = items[0]
            switch item.kind {
            case .file: return SafeDisplay.quoted(item.name)
            case .link: return "the link " + SafeDisplay.quoted(item.name)
            case .text: return "a text " + SafeDisplay.quoted(String(item.name.prefix(40)) + (item.name.count > 40 ? "…" : ""))
            }
        }
        return "\(items.count) files"
    }

    private static func row(_ id: String, _ state: String, _ created: String, _ what: String) -> String {
        [pad(id, 26), pad(state, 20), pad(created, 20), what].joined(separator: "  ")
    }

    private static func pad(_ text: String, _ width: Int) -> String {
        text + String(repeating: " ", count: max(0, width - text.count))
    }
}
