import Synchronization

/// A part that can only be given after its holder is built: the bus object that announces the
/// service's changes needs the service, and the start-up needs both. Given once, while the
/// service is wired and before its bus name is owned (ServiceApplication.run); read as often as
/// needed, from any thread. Until it is given, readers get `initial` (nothing is announced
/// before the wiring is done); a second `wire` is a programming error.
final class WiredLater<Value: Sendable>: Sendable {
    private let cell: Mutex<(value: Value, wired: Bool)>

    init(_ initial: Value) {
        cell = Mutex((initial, false))
    }

    var value: Value { cell.withLock { $0.value } }

    func wire(_ value: Value) {
        cell.withLock { cell in
            precondition(!cell.wired, "wired twice")
            cell = (value, true)
        }
    }
}
