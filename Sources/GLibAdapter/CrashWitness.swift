#if canImport(Glibc)
import Glibc
#endif

/// A note left behind when the process dies of a crash, naming what it was working on.
///
/// A share whose sending crashes the service would crash it again at every start. The witness
/// tells a crash (a trap, a bad access, an abort) from a kill or a power cut: only a crash signal
/// runs its handler, which appends the current subject (a share id) and a newline to a file the
/// next start reads (`CrashTally`). Everything the handler touches is prepared beforehand, and it
/// only calls write(2), sigaction(2), raise(3) and the handler it displaced, which are async-signal-safe
/// (or, for the Swift runtime's backtracer, meant to run in a crash).
public enum CrashWitness {
    /// The signals a crash arrives as: Swift's traps are SIGILL (x86-64) or SIGTRAP (arm64).
    static let signals: [Int32] = [SIGILL, SIGTRAP, SIGSEGV, SIGBUS, SIGFPE, SIGABRT]
    static let capacity = 256

    // Written by one thread at a time (the sender's), read by the crashing thread. A torn read
    // names part of an id at worst, which matches no share: nothing is blamed wrongly.
    nonisolated(unsafe) static var fd: Int32 = -1
    nonisolated(unsafe) static var note = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
    nonisolated(unsafe) static var length = 0
    nonisolated(unsafe) static var previous: UnsafeMutablePointer<sigaction> = {
        let actions = UnsafeMutablePointer<sigaction>.allocate(capacity: 65)
        actions.initialize(repeating: sigaction(), count: 65)
        return actions
    }()

    /// Opens (creating, 0600, never through a symlink) the file the notes are appended to, and
    /// installs the handler in front of whatever handled the crash signals before (the Swift
    /// runtime's backtracer, or the default), which still runs after the note is written.
    public static func install(path: String) {
        fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { return }
        _ = (note, previous)
        for signal in signals {
            var action = sigaction()
            action.__sigaction_handler.sa_sigaction = { signal, info, context in
                if CrashWitness.length > 0 { _ = write(CrashWitness.fd, CrashWitness.note, CrashWitness.length) }
                CrashWitness.runPrevious(signal, info, context)
                // The handler before ours may return (the Swift runtime's backtracer does, expecting
                // a fault to fault again, which a signal sent by kill(2) never does): the process
                // must end all the same. The signal is blocked until this handler returns, and is
                // then delivered to the default action, as it would have been without us.
                var fallback = sigaction()
                fallback.__sigaction_handler.sa_handler = SIG_DFL
                sigaction(signal, &fallback, nil)
                raise(signal)
            }
            sigemptyset(&action.sa_mask)
            action.sa_flags = SA_SIGINFO
            sigaction(signal, &action, previous + Int(signal))
        }
    }

    /// Calls the handler that was installed before ours, if it was a function (not the default
    /// action, nor ignore).
    private static func runPrevious(
        _ signal: Int32, _ info: UnsafeMutablePointer<siginfo_t>?,
        _ context: UnsafeMutableRawPointer?
    ) {
        let before = previous[Int(signal)]
        if before.sa_flags & SA_SIGINFO != 0 {
            before.__sigaction_handler.sa_sigaction?(signal, info, context)
            return
        }
        guard let handler = before.__sigaction_handler.sa_handler else { return } // SIG_DFL is nil
        if unsafeBitCast(handler, to: Int.self) == 1 { return } // SIG_IGN
        handler(signal)
    }

    /// What the process is working on now (nil: nothing worth blaming). A subject longer than
    /// the note's room is not recorded.
    public static func working(on subject: String?) {
        length = 0
        guard let subject, subject.utf8.count < capacity else { return }
        var count = 0
        for byte in subject.utf8 {
            note[count] = byte
            count += 1
        }
        note[count] = UInt8(ascii: "\n")
        length = count + 1
    }
}
