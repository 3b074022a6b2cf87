import FerryCore
import FerryOutbox
import Foundation
import Logging

/// The shares the service crashed on too often, set aside at start (CrashTally, CrashWitness).
public enum CrashedShares {
    /// Reads the witness's notes at `path`, fails every share that crashed the service
    /// `CrashTally.limit` times (each unfinished delivery with `DeliveryFailed` and the reason),
    /// and leaves in the file only the notes still worth counting. Returns the shares failed.
    /// Runs before the witness is installed and before the sender starts, on the starting thread.
    /// A note or a share that cannot be read or written is logged and skipped: the share is
    /// counted again at the next start.
    public static func setAside(notesAt path: String, outbox: Outbox, at time: Int64, logger: Logger) -> [Share] {
        // No file is the usual case: no crash since the last start.
        guard let notes = try? String(contentsOfFile: path, encoding: .utf8), !notes.isEmpty else { return [] }
        let queue = logger.attempt("reading the queue for the crash notes") {
            try outbox.shares(in: [.queued, .sending])
        }
        guard let queue else { return [] }
        let unfinished = Set(queue.map(\.id))
        let tally = CrashTally(notes: notes, unfinished: unfinished)
        var failed: [Share] = []
        for id in tally.givenUp {
            let share = logger.attempt("reading a share that crashed it", share: id) { try outbox.share(id: id) }
            guard let share else { continue }
            for (position, delivery) in share.deliveries.enumerated() where !delivery.state.isFinal {
                let error = ShareError.deliveryFailed(delivery.destination, reason: CrashTally.reason)
                _ = logger.attempt("failing a delivery that crashed the service", share: id) {
                    try outbox.updateDelivery(shareID: id, position: position) {
                        $0.state = .failed
                        $0.failure = Share.Failure(name: error.name, message: error.message)
                        $0.retryAt = nil
                    }
                }
            }
            let error = ShareError.deliveryFailed(
                // TRANSLATORS: completes "Sending to {room} failed: {reason}." for a share that had no destination.
                share.intent.destinations.first ?? tr("its destinations"), reason: CrashTally.reason)
            let failure = Share.Failure(name: error.name, message: error.message)
            let settled = logger.attempt("failing a share that crashed the service", share: id) {
                try outbox.update(id: id, state: .failed, failure: failure, at: time, from: [.queued, .sending])
            }
            if let settled {
                failed.append(settled)
            }
        }
        // Written whole and renamed over: a crash now never leaves half a file of notes.
        _ = logger.attempt("writing the crash notes") {
            try Data(tally.remainingNotes.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
        }
        return failed
    }
}
