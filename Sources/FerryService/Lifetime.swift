import GLibAdapter

/// Keeps the service process alive while it is serving calls or has work of its own, and lets
/// GApplication's inactivity timeout end it otherwise.
///
/// GApplication counts its own interface's calls, not ours; each Share1 call holds the
/// application until it is answered, so the timeout only starts once every client is served.
///
/// Once no call has been in flight or answered for `quietPeriod`, the program's code leaves its
/// resident memory (`MemoryPolicy.releaseCode`): a service waiting for the next share, or for the
/// network with shares queued, keeps mapped only what it runs while waiting (issue 19). The end
/// of its own work (a send, a verification) counts as a call answered: what that work ran goes too.
/// Work still going when the code goes (an upload) maps back what it runs, a fault per 64 KB.
@GLibMain final class Lifetime {
    static let quietPeriod: UInt32 = 500

    private let application: Application
    private var holdsForWork = false
    private var holdsForVerification = false
    private var callsInFlight = 0
    /// Counts answered calls (and ends of work), so that a quiet-period timer knows whether one came meanwhile.
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
            activityEnded()
        }
    }

    /// A call answered, or the end of work of the service's own: the quiet period starts again.
    private func activityEnded() {
        callsAnswered &+= 1
        if !quietTimerArmed { armQuietTimer() }
    }

    /// One timer for a burst of calls: it re-arms while calls keep coming, and a call in flight
    /// when it fires re-arms it as it ends. So the code is released 500 to 1000 ms after the last
    /// call was answered.
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
            if !pending { activityEnded() }
        }
    }

    /// Holds the process while an emoji verification waits for the other device or the person.
    nonisolated func setVerifying(_ verifying: Bool) {
        MainContext.invoke { [self] in
            guard verifying != holdsForVerification else { return }
            holdsForVerification = verifying
            verifying ? application.hold() : application.release()
            if !verifying { activityEnded() }
        }
    }
}
