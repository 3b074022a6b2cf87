import FerryCore
import FerryOutbox
import Foundation
import NIOConcurrencyHelpers

/// Makes Cancel final: "is the share still being sent?" and "its event request is on its way" are
/// one step for the sender, and "cancel it" and "which of its events are already on their way"
/// one step for a person, so the two can never both win.
///
/// Without it the sender read `sending`, a person cancelled and heard "cancelled", and the event
/// went out anyway. With it, a Cancel that comes while an event request is on its way still stops
/// everything after it, and says which destinations it came too late for.
final class SendGate: Sendable {
    /// Shares with an event request on its way, and to which destinations. Its lock is also what
    /// makes each check-and-change below one step.
    private let onItsWay = NIOLockedValueBox<[String: [String]]>([:])

    /// Called right before an event request: true (and the request counts as on its way) when the
    /// share is still being sent; false when it was cancelled or settled. Throws when the state
    /// cannot be read (nothing counts as on its way then).
    func enter(shareID: String, destination: String, outbox: Outbox) throws -> Bool {
        try onItsWay.withLockedValue { onItsWay in
            guard try outbox.state(of: shareID) == .sending else { return false }
            onItsWay[shareID, default: []].append(destination)
            return true
        }
    }

    /// Called when the event request has an answer (or failed).
    func leave(shareID: String, destination: String) {
        onItsWay.withLockedValue { onItsWay in
            guard var destinations = onItsWay[shareID], let index = destinations.firstIndex(of: destination) else {
                return
            }
            destinations.remove(at: index)
            onItsWay[shareID] = destinations.isEmpty ? nil : destinations
        }
    }

    /// Cancels the share (compare-and-set from a state that can be cancelled) and returns it with
    /// the destinations whose event was already on its way; nil when its state no longer allows it.
    func cancel(
        shareID: String, outbox: Outbox, at time: Int64
    ) throws(OutboxError) -> (share: Share, tooLateFor: [String])? {
        // The lock's closure rethrows untyped: the outcome leaves it as a Result.
        try onItsWay.withLockedValue { onItsWay in
            Result { () throws(OutboxError) -> (share: Share, tooLateFor: [String])? in
                let cancellable = Set(ShareState.allCases.filter(\.isCancellable))
                guard let share = try outbox.update(id: shareID, state: .cancelled, at: time, from: cancellable) else {
                    return nil
                }
                return (share, onItsWay[shareID] ?? [])
            }
        }.get()
    }
}
