import Foundation
import NIOConcurrencyHelpers

/// Passes on upload progress at most a few times a second: every chunk would mean a commit and
/// a D-Bus signal each megabyte.
final class ProgressThrottle: Sendable {
    private let last = NIOLockedValueBox(DispatchTime(uptimeNanoseconds: 0))
    private let interval: UInt64
    private let report: @Sendable (UInt64) -> Void

    init(milliseconds: UInt64 = 250, report: @escaping @Sendable (UInt64) -> Void) {
        interval = milliseconds * 1_000_000
        self.report = report
    }

    func update(_ bytes: UInt64) {
        let now = DispatchTime.now()
        let due: Bool = last.withLockedValue { last in
            guard now.uptimeNanoseconds - last.uptimeNanoseconds >= interval else { return false }
            last = now
            return true
        }
        if due { report(bytes) }
    }
}
