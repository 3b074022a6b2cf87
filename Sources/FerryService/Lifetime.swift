import GLibAdapter

/// Keeps the service process alive while it is serving calls or has work of its own, and lets
/// GApplication's inactivity timeout end it otherwise.
///
/// GApplication counts its own interface's calls, not ours; each Share1 call holds the
/// application until it is answered, so the timeout only starts once every client is served.
@GLibMain final class Lifetime {
    private let application: Application
    private var holdsForWork = false
    private var holdsForVerification = false

    init(application: Application) { self.application = application }

    /// Called as a call arrives (on the main loop, or on GDBus's thread for an intercepted Open):
    /// the hold happens on the main loop, before the answer's release (both queued in order).
    nonisolated func beginCall() { MainContext.invoke { [self] in application.hold() } }

    /// Called from any thread once the call is answered.
    nonisolated func endCall() { MainContext.invoke { [self] in application.release() } }

    /// Holds the process while the outbox has work for Ferry itself (queued or sending shares).
    nonisolated func setPendingWork(_ pending: Bool) {
        MainContext.invoke { [self] in
            guard pending != holdsForWork else { return }
            holdsForWork = pending
            pending ? application.hold() : application.release()
        }
    }

    /// Holds the process while an emoji verification waits for the other device or the person.
    nonisolated func setVerifying(_ verifying: Bool) {
        MainContext.invoke { [self] in
            guard verifying != holdsForVerification else { return }
            holdsForVerification = verifying
            verifying ? application.hold() : application.release()
        }
    }
}
