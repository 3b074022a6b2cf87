import FerryContract
import FerryCore
import GLibAdapter
#if canImport(Glibc)
import Glibc
#endif

/// Follows a share until it is sent or failed: `ShareChanged` signals as they come, and a look
/// every few seconds in case the service restarted in between (it keeps the share; the signal
/// subscription would not notice).
struct DeliveryWatch {
    let client: Share1Client
    let shareID: String

    func waitUntilDone() throws(CommandFailure) {
        // The command runs on the main thread, the main loop's: its actor is this thread's to take.
        let final = GLibMain.assumeIsolated { follow() }
        guard let share = final else { return }
        switch share.state {
        case .sent:
            Terminal.note(
                tr(
                    // TRANSLATORS: {destinations} is a comma-separated list of rooms and people.
                    "Sent to {destinations}.",
                    [
                        "destinations": share.deliveries.map { SafeDisplay.escaped($0.destination) }.joined(
                            separator: ", ")
                    ]))
        case .failed:
            let failed = share.deliveries.filter { $0.state == .failed }
            for delivery in failed { Terminal.error(delivery.failure?.message ?? tr("sending failed")) }
            // One error for all: its own exit status; some arrived and some not: 1 (docs/CONTRACT.md).
            let names = Set(failed.compactMap { $0.failure?.name })
            if failed.count == share.deliveries.count, names.count == 1, let name = names.first {
                throw CommandFailure(
                    status: ExitStatus.forErrorName(name),
                    // TRANSLATORS: `ferry retry {id}` is a command to type as it is; {id} is the share's id.
                    message: tr("the share was not sent; `ferry retry {id}` tries again.", ["id": shareID]))
            }
            throw CommandFailure(
                status: 1,
                message: tr(
                    // TRANSLATORS: `ferry retry {id}` is a command to type as it is; {id} is the share's id.
                    "the share did not reach every destination; `ferry retry {id}` tries again.", ["id": shareID]))
        case .cancelled:
            throw CommandFailure(status: 1, message: tr("the share was cancelled before it was sent."))
        default:
            Terminal.note(ShareFormatter.nextStep(for: share))
        }
    }
}

extension DeliveryWatch {
    /// Spins the main loop until the share is settled or waits for a person; returns it then.
    @GLibMain private func follow() -> Share? {
        let following = Following(shareID: shareID, bar: ProgressBar(enabled: Terminal.standardErrorIsTerminal))
        MainContext.runUntilDone { done in
            following.done = done
            client.onShareChanged { following.consider($0) }
            following.poll(client)
        }
        following.bar.finish()
        return following.final
    }
}

/// What the watch has seen so far, on the main loop.
@GLibMain private final class Following {
    let shareID: String
    let bar: ProgressBar
    var final: Share?
    var done: () -> Void = {}

    init(shareID: String, bar: ProgressBar) {
        self.shareID = shareID
        self.bar = bar
    }

    func consider(_ share: Share) {
        guard share.id == shareID, final == nil else { return }
        bar.show(share)
        if share.state.isFinal || share.state.awaitsPerson {
            final = share
            done()
        }
    }

    /// Asks for the share now and every two seconds (a restarted service sends no signal for it).
    func poll(_ client: Share1Client) {
        guard final == nil else { return }
        if let share = try? client.run(Share1.getShare(shareID)) { consider(share) }
        MainContext.after(milliseconds: 2000) { self.poll(client) }
    }
}

/// A one-line progress bar on a terminal's standard error: bytes for files, messages otherwise.
final class ProgressBar {
    private let enabled: Bool
    private var shown = false

    init(enabled: Bool) { self.enabled = enabled }

    func show(_ share: Share) {
        guard enabled, !share.deliveries.isEmpty else { return }
        let sent = share.deliveries.reduce(UInt64(0)) { $0 + $1.bytesSent }
        let total = share.deliveries.reduce(UInt64(0)) { $0 + $1.bytesTotal }
        let events = share.deliveries.reduce(0) { $0 + $1.eventsSent }
        let eventsTotal = share.deliveries.reduce(0) { $0 + $1.eventsTotal }
        let fraction = total > 0 ? Double(sent) / Double(total) : Double(events) / Double(max(eventsTotal, 1))
        let width = 30
        let filled = Int((fraction * Double(width)).rounded(.down))
        let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
        var detail =
            total > 0
            // TRANSLATORS: progress of a share on the terminal; {sent} and {total} are sizes ("1.5 MB").
            ? tr("{sent} of {total}", ["sent": ByteCount.format(sent), "total": ByteCount.format(total)])
            // TRANSLATORS: progress of a share on the terminal: {sent} of the {count} messages are sent.
            : trn("{sent} of {count} message", "{sent} of {count} messages", eventsTotal, ["sent": String(events)])
        if share.deliveries.contains(where: { $0.state == .retrying }) {
            // TRANSLATORS: {progress} is the progress so far ("1.5 MB of 3 MB").
            detail = tr("{progress} (waiting to retry)", ["progress": detail])
        }
        Terminal.standardError("\r\u{1B}[2K\(bar) \(Int(fraction * 100))%  \(detail)")
        shown = true
    }

    func finish() {
        if shown { Terminal.standardError("\r\u{1B}[2K") }
    }
}
