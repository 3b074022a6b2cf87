import CGLib
import Foundation

/// GLib's main loop as a global actor: what must run on it says so in its type (`@GLibMain`), and
/// the compiler keeps everything else off it. The loop runs on the process's main thread in every
/// Ferry program (the service's GApplication, the UI's GTK, the command line's private loop), so
/// that thread is the actor; work for it from elsewhere is queued on GLib's default main context.
///
/// Swift's own MainActor cannot serve: on Linux its queue is drained only by dispatchMain or a
/// run loop, never by GLib's loop.
@globalActor public actor GLibMain {
    public static let shared = GLibMain()

    public nonisolated var unownedExecutor: UnownedSerialExecutor { MainLoopExecutor.shared.asUnownedSerialExecutor() }

    /// Whether the caller is on the main loop's thread.
    public static var isCurrent: Bool { Thread.isMainThread }

    /// Runs `body` as main-loop code; the caller must be on the main loop's thread (checked: a
    /// call from elsewhere stops the process rather than race).
    public static func assumeIsolated<T>(_ body: @GLibMain () throws -> T) rethrows -> T {
        precondition(isCurrent, "main-loop code called from another thread")
        // The check above is the proof of isolation; this is how MainActor.assumeIsolated runs its body.
        return try withoutActuallyEscaping(body) { body in
            try unsafeBitCast(body, to: (() throws -> T).self)()
        }
    }
}

/// Runs the actor's jobs from GLib's default main context.
final class MainLoopExecutor: SerialExecutor {
    static let shared = MainLoopExecutor()

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedSerialExecutor()
        MainContext.queue { job.runSynchronously(on: executor) }
    }

    func checkIsolated() {
        precondition(GLibMain.isCurrent, "main-loop code called from another thread")
    }
}
