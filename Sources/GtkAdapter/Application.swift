import CGtk

/// The GTK application: one process per session (a unique bus name), to which later launches
/// hand their command line and environment; it runs while any window is open.
public final class WindowApplication {
    let gtk: UnsafeMutablePointer<GtkApplication>

    /// One launch of the program, as the running instance receives it.
    public struct Launch {
        /// The arguments after the program name.
        public let arguments: [String]
        /// Looks up a variable in the launching process's environment (not this process's).
        public let environment: (String) -> String?
    }

    public init(id: String) {
        let flags = G_APPLICATION_HANDLES_COMMAND_LINE.rawValue
        gtk = UnsafeMutableRawPointer(adw_application_new(id, GApplicationFlags(rawValue: flags))!)
            .assumingMemoryBound(to: GtkApplication.self)
    }

    private var gapp: UnsafeMutablePointer<GApplication> {
        UnsafeMutableRawPointer(gtk).assumingMemoryBound(to: GApplication.self)
    }

    /// Each launch, the first and later ones, arrives here in the running instance. The returned
    /// value is the launching process's exit status.
    public func onLaunch(_ handler: @escaping (Launch) -> Int32) {
        let box = LaunchHandler(handler)
        let callback:
            @convention(c) (
                UnsafeMutableRawPointer?, UnsafeMutablePointer<GApplicationCommandLine>?, UnsafeMutableRawPointer?
            ) -> Int32 = {
                _, commandLine, data in
                let handler = Unmanaged<LaunchHandler>.fromOpaque(data!).takeUnretainedValue()
                var argc: Int32 = 0
                let argv = g_application_command_line_get_arguments(commandLine, &argc)
                defer { g_strfreev(argv) }
                let arguments = (0..<Int(argc)).dropFirst().map { String(cString: argv![$0]!) }
                g_object_ref(UnsafeMutableRawPointer(commandLine))
                defer { g_object_unref(UnsafeMutableRawPointer(commandLine)) }
                let launch = Launch(arguments: arguments) { name in
                    g_application_command_line_getenv(commandLine, name).map { String(cString: $0) }
                }
                return handler.body(launch)
            }
        g_signal_connect_data(
            UnsafeMutableRawPointer(gtk), "command-line", unsafeBitCast(callback, to: GCallback.self),
            Unmanaged.passRetained(box).toOpaque(), nil, GConnectFlags(rawValue: 0))
    }

    /// Once, in the instance that stays running, before the first launch is handled.
    public func onStartup(_ handler: @escaping () -> Void) {
        Signals.connect(UnsafeMutableRawPointer(gtk), "startup", handler)
    }

    /// Keeps the application running without a window (while a window is being prepared).
    public func hold() { g_application_hold(gapp) }
    public func release() { g_application_release(gapp) }

    /// Runs until the last window closes; returns the exit status.
    public func run(arguments: [String]) -> Int32 {
        var argv = arguments.map { strdup($0) }
        defer { argv.forEach { free($0) } }
        return argv.withUnsafeMutableBufferPointer { buffer in
            g_application_run(gapp, Int32(buffer.count), buffer.baseAddress)
        }
    }
}

private final class LaunchHandler {
    let body: (WindowApplication.Launch) -> Int32
    init(_ body: @escaping (WindowApplication.Launch) -> Int32) { self.body = body }
}
