import GLibAdapter

/// Keeps the service process alive while it is serving calls or has work of its own, and lets
/// GApplication's inactivity timeout end it otherwise.
///
/// GApplication counts its own interface's calls, not ours; each Share1 call holds the
/// application until it is answered, so the timeout only starts once every client is served.
///
/// Once no call has come for `quietPeriod`, the program's code leaves the working set
/// (`MemoryPolicy.releaseCode`): a service waiting for the next share keeps mapped only what it
/// runs while waiting (issue 19).
@GLibMain final class Lifetime {
    static let quietPeriod: UInt32 = 500

    private let application: Application
    private var holdsForWork = false
    private var holdsForVerification = false
    private var callsInFlight = 0
    /// Counts answered calls, so that a quiet-period timer knows whether one came meanwhile.
    private var callsAnswered = 0
    private var quietTimerArmed = false

    init(application: Application) { self.application = application }

    /// Called as a call arrives (on the main loop, or on GDBus's thread for an intercepted Open):
    /// the hold happens on the main loop, before the answer's release (both queued in order).
    nonisolated func beginCall() {
        MainContext.invoke { [self] in
            application.hold()
            callsInFlight += 1
        }
    }

    /// Called from any thread once the call is answered.
    nonisolated func endCall() {
        MainContext.invoke { [self] in
            application.release()
            callsInFlight -= 1
            callsAnswered &+= 1
            if !quietTimerArmed { armQuietTimer() }
        }
    }

    /// One timer for a burst of calls: it re-arms while calls keep coming, and the call in flight
    /// when it fires re-arms it as it ends.
    private func armQuietTimer() {
        quietTimerArmed = true
        let answered = callsAnswered
        MainContext.after(milliseconds: Self.quietPeriod) { [self] in
            quietTimerArmed = false
            guard callsInFlight == 0 else { return }
            if callsAnswered != answered {
                armQuietTimer()
            } else {
                MemoryPolicy.releaseCode()
            }
        }
    }

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
