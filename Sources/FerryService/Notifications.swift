import FerryCore
import GLibAdapter

/// The desktop notifications that close a share's story: where it went, or why not, with Retry.
enum Notifications {
    static func finished(_ share: Share, destinationNames: [String], application: Application) {
        let rooms = destinationNames.map(SafeDisplay.escaped)
        switch share.state {
        case .sent:
            application.sendNotification(id: "share-\(share.id)", title: "Shared",
                                         body: "Sent to \(rooms.joined(separator: ", ")).")
        case .failed:
            application.sendNotification(id: "share-\(share.id)", title: "Ferry could not send your share",
                                         body: share.failure?.message ?? "It could not be delivered.",
                                         buttons: [(label: "Retry", action: "retry", target: share.id)])
        default: break
        }
    }
}
