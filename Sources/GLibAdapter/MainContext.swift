import CGLib

/// GLib's main loop: work queued for it from any thread, timers, signals (GLibMain is its actor).
public enum MainContext {
    /// Runs `work` on the main loop: at once when called there, else queued; callable from any thread.
    public static func invoke(_ work: @escaping @Sendable @GLibMain () -> Void) {
        if GLibMain.isCurrent {
            GLibMain.assumeIsolated(work)
            return
        }
        // Queued, never run here: g_main_context_invoke would acquire a context nobody owns yet and
        // run `work` on this thread, and g_application_run, starting at that moment, then finds the
        // context taken and exits (seen when the sender finished a share during start-up).
        queue { GLibMain.assumeIsolated(work) }
    }

    /// Queues `work` on the default main context; it runs on the main loop's next turn.
    static func queue(_ work: @escaping @Sendable () -> Void) {
        let box = Unmanaged.passRetained(Box(work)).toOpaque()
        g_idle_add_full(
            G_PRIORITY_DEFAULT,
            { userData in
                Unmanaged<Box<@Sendable () -> Void>>.fromOpaque(userData!).takeUnretainedValue().value()
                return 0 // G_SOURCE_REMOVE
            }, box,
            { userData in
                Unmanaged<Box<@Sendable () -> Void>>.fromOpaque(userData!).release()
            })
    }

    /// Calls `handler` on the main loop whenever the process receives `signal` (SIGTERM, SIGINT, SIGHUP).
    @GLibMain public static func onUnixSignal(_ signal: Int32, _ handler: @escaping @GLibMain () -> Void) {
        let box = Unmanaged.passRetained(Box(handler)).toOpaque()
        g_unix_signal_add_full(
            G_PRIORITY_DEFAULT, signal,
            { userData in
                let handler = Unmanaged<Box<@GLibMain () -> Void>>.fromOpaque(userData!).takeUnretainedValue().value
                GLibMain.assumeIsolated(handler)
                return 1 // G_SOURCE_CONTINUE
            }, box, nil)
    }

    /// Calls `handler` on the main loop after `milliseconds`, once. Callable from any thread: it only
    /// adds a source to the default context.
    public static func after(milliseconds: UInt32, _ handler: @escaping @GLibMain () -> Void) {
        let box = Unmanaged.passRetained(Box(handler)).toOpaque()
        g_timeout_add_full(
            G_PRIORITY_DEFAULT, milliseconds,
            { userData in
                let handler = Unmanaged<Box<@GLibMain () -> Void>>.fromOpaque(userData!).takeUnretainedValue().value
                GLibMain.assumeIsolated(handler)
                return 0
            }, box,
            { userData in
                Unmanaged<Box<@GLibMain () -> Void>>.fromOpaque(userData!).release()
            })
    }

    /// Runs a private main loop on the main thread until `done` is called (for the command line).
    @GLibMain public static func runUntilDone(_ body: (_ done: @escaping () -> Void) -> Void) {
        let loop = g_main_loop_new(nil, 0)
        defer { g_main_loop_unref(loop) }
        body { g_main_loop_quit(loop) }
        g_main_loop_run(loop)
    }
}
