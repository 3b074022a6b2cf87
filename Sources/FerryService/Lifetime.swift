import GLibAdapter

/// Keeps the service process alive while it is serving calls or has work of its own, and lets
/// GApplication's inactivity timeout end it otherwise.
///
/// GApplication counts its own interface's calls, not ours; each Share1 call holds the
/// application until it is answered, so the timeout only starts once every client is served.
// @unchecked Sendable: `holdsForWork` is read and written only on the main loop (inside
// MainContext.invoke), and GApplication's hold and release are called only there too.
final class Lifetime: @unchecked Sendable {
    private let application: Application
    private var holdsForWork = false

    init(application: Application) { self.application = application }

    /// Called on the main thread as a call arrives.
    func beginCall() { application.hold() }

    /// Called from any thread once the call is answered.
    func endCall() { MainContext.invoke { [application] in application.release() } }

    /// Holds the process while the outbox has work for Ferry itself (queued or sending shares).
    func setPendingWork(_ pending: Bool) {
        MainContext.invoke { [self] in
            guard pending != holdsForWork else { return }
            holdsForWork = pending
            pending ? application.hold() : application.release()
        }
    }
}
