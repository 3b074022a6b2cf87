import FerryCore
import GLibAdapter

/// The desktop notifications that close a share's story: where it went, or why not, with Retry.
/// A burst of finished shares is told as one notification (FinishedNotices).
@GLibMain final class FinishedNotifier {
    private let application: Application
    private var notices = FinishedNotices()
    private var flushScheduled = false

    init(application: Application) { self.application = application }

    func finished(_ share: Share, destinationNames: [String]) {
        let rooms = destinationNames.map(SafeDisplay.escaped)
        if let notice = notices.finished(share, rooms: rooms, at: SystemClock.monotonicMicroseconds()) { show(notice) }
        guard notices.hasPending, !flushScheduled else { return }
        flushScheduled = true
        MainContext.after(milliseconds: UInt32(notices.updateInterval / 1000)) { [self] in
            flushScheduled = false
            notices.flush(at: SystemClock.monotonicMicroseconds()).forEach(show)
        }
    }

    private func show(_ notice: FinishedNotices.Notice) {
        var buttons: [(label: String, action: String, target: String?)] = []
        if let share = notice.retryShareID {
            buttons.append((label: trc("button", "Retry"), action: "retry", target: share))
        }
        // TRANSLATORS: a button on a notification; it opens Ferry's window with the list of shares.
        if notice.showsShares { buttons.append((label: tr("Show Shares"), action: "shares", target: nil)) }
        application.sendNotification(
            id: notice.id, title: notice.title, body: notice.body,
            defaultAction: notice.showsShares ? ("shares", nil) : nil, buttons: buttons)
    }
}
