import CGLib

/// GLib's main loop, as seen from other threads.
public enum MainContext {
    /// Runs `work` on the main (default) context's thread, soon; callable from any thread.
    public static func invoke(_ work: @escaping () -> Void) {
        if g_main_context_is_owner(nil) != 0 {
            work()
            return
        }
        // Queued, never run here: g_main_context_invoke would acquire a context nobody owns yet and
        // run `work` on this thread, and g_application_run, starting at that moment, then finds the
        // context taken and exits (seen when the sender finished a share during start-up).
        let box = Unmanaged.passRetained(Box(work)).toOpaque()
        g_idle_add_full(G_PRIORITY_DEFAULT, { userData in
            Unmanaged<Box<() -> Void>>.fromOpaque(userData!).takeUnretainedValue().value()
            return 0 // G_SOURCE_REMOVE
        }, box, { userData in
            Unmanaged<Box<() -> Void>>.fromOpaque(userData!).release()
        })
    }

    /// Calls `handler` on the main context whenever the process receives `signal` (SIGTERM, SIGINT, SIGHUP).
    public static func onUnixSignal(_ signal: Int32, _ handler: @escaping () -> Void) {
        let box = Unmanaged.passRetained(Box(handler)).toOpaque()
        g_unix_signal_add_full(G_PRIORITY_DEFAULT, signal, { userData in
            Unmanaged<Box<() -> Void>>.fromOpaque(userData!).takeUnretainedValue().value()
            return 1 // G_SOURCE_CONTINUE
        }, box, nil)
    }

    /// Calls `handler` on the main context after `milliseconds`, once.
    public static func after(milliseconds: UInt32, _ handler: @escaping () -> Void) {
        let box = Unmanaged.passRetained(Box(handler)).toOpaque()
        g_timeout_add_full(G_PRIORITY_DEFAULT, milliseconds, { userData in
            Unmanaged<Box<() -> Void>>.fromOpaque(userData!).takeUnretainedValue().value()
            return 0
        }, box, { userData in
            Unmanaged<Box<() -> Void>>.fromOpaque(userData!).release()
        })
    }

    /// Runs a private main loop on the calling thread until `done` is called (for the command line).
    public static func runUntilDone(_ body: (_ done: @escaping () -> Void) -> Void) {
        let loop = g_main_loop_new(nil, 0)
        defer { g_main_loop_unref(loop) }
        body { g_main_loop_quit(loop) }
        g_main_loop_run(loop)
    }
}
