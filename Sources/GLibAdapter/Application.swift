import CGLib

/// A headless GApplication: owns the bus name, implements org.freedesktop.Application
/// (Activate, Open, ActivateAction) and keeps the process alive while held.
///
/// Everything here runs on the main loop (`run()` spins it), and the type says so.
@GLibMain public final class Application {
    // Read from the deinit, which Swift 6 runs unisolated: it only drops the reference (atomic).
    nonisolated(unsafe) let raw: UnsafeMutablePointer<GApplication>
    private var retained: [AnyObject] = []

    /// What the application should do when the last hold is released and the timeout passes.
    public struct Options: Sendable {
        public var isService: Bool
        public var handlesOpen: Bool
        public init(isService: Bool = true, handlesOpen: Bool = true) {
            self.isService = isService
            self.handlesOpen = handlesOpen
        }
    }

    public init(id: String, options: Options = Options()) {
        var flags = G_APPLICATION_DEFAULT_FLAGS.rawValue
        if options.isService { flags |= G_APPLICATION_IS_SERVICE.rawValue }
        if options.handlesOpen { flags |= G_APPLICATION_HANDLES_OPEN.rawValue }
        raw = g_application_new(id, GApplicationFlags(rawValue: flags))!
    }

    deinit { g_object_unref(UnsafeMutableRawPointer(raw)) }

    private var gobject: UnsafeMutableRawPointer { UnsafeMutableRawPointer(raw) }

    /// Milliseconds the service stays up after its last hold is released.
    public var inactivityTimeout: UInt32 {
        get { g_application_get_inactivity_timeout(raw) }
        set { g_application_set_inactivity_timeout(raw, newValue) }
    }

    /// org.freedesktop.Application.Activate (and a plain start without arguments).
    public func onActivate(_ handler: @escaping @GLibMain () -> Void) {
        let box = Box(handler)
        retained.append(box)
        let callback: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Void = { _, userData in
            GLibMain.assumeIsolated(
                Unmanaged<Box<@GLibMain () -> Void>>.fromOpaque(userData!).takeUnretainedValue().value)
        }
        connect("activate", unsafeBitCast(callback, to: GCallback.self), box)
    }

    /// An application action (`app.NAME`), reachable through ActivateAction, desktop-file actions
    /// and notification buttons. `parameterType` is a GVariant type string such as "s", or nil.
    public func addAction(
        _ name: String, parameterType: String? = nil, _ handler: @escaping @GLibMain (Variant?) -> Void
    ) {
        let type = parameterType.map { g_variant_type_new($0) }
        defer { if let type { g_variant_type_free(type) } }
        let action = g_simple_action_new(name, type ?? nil)!
        let box = Box(handler)
        retained.append(box)
        let callback: @convention(c) (OpaquePointer?, OpaquePointer?, UnsafeMutableRawPointer?) -> Void = {
            _, parameter, userData in
            let box = Unmanaged<Box<@GLibMain (Variant?) -> Void>>.fromOpaque(userData!).takeUnretainedValue()
            let value = parameter.map { Variant(gvariant: $0) }
            GLibMain.assumeIsolated { box.value(value) }
        }
        g_signal_connect_data(
            UnsafeMutableRawPointer(action), "activate",
            unsafeBitCast(callback, to: GCallback.self),
            Unmanaged.passUnretained(box).toOpaque(), nil, GConnectFlags(rawValue: 0))
        g_action_map_add_action(OpaquePointer(gobject), action)
        g_object_unref(UnsafeMutableRawPointer(action))
    }

    public func hold() { g_application_hold(raw) }
    public func release() { g_application_release(raw) }
    public func quit() { g_application_quit(raw) }

    /// Registers on the bus and runs the main loop until the application quits; returns the exit status.
    public func run() -> Int32 {
        g_application_run(raw, 0, nil)
    }

    /// Shows a desktop notification. `defaultAction` and each button name an `app.` action,
    /// optionally with a string target (e.g. a share id).
    public func sendNotification(
        id: String, title: String, body: String,
        defaultAction: (action: String, target: String?)? = nil,
        buttons: [(label: String, action: String, target: String?)] = []
    ) {
        let notification = g_notification_new(title)
        defer { g_object_unref(UnsafeMutableRawPointer(notification)) }
        g_notification_set_body(notification, body)
        if let defaultAction {
            g_notification_set_default_action_and_target_value(
                notification, "app." + defaultAction.action,
                defaultAction.target.map { g_variant_new_string($0) } ?? nil)
        }
        for button in buttons {
            g_notification_add_button_with_target_value(
                notification, button.label, "app." + button.action,
                button.target.map { g_variant_new_string($0) } ?? nil)
        }
        g_application_send_notification(raw, id, notification)
    }

    private func connect(_ signal: String, _ callback: GCallback, _ box: AnyObject) {
        g_signal_connect_data(
            gobject, signal, callback, Unmanaged.passUnretained(box).toOpaque(), nil,
            GConnectFlags(rawValue: 0))
    }
}

/// A Swift value handed through a C callback's user data.
final class Box<T> {
    let value: T
    init(_ value: T) { self.value = value }
}
