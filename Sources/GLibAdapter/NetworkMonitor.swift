import CGLib

/// GIO's network monitor: tells when the network comes and goes (NetworkManager, or netlink).
public enum NetworkMonitor {
    /// Calls `handler` on the main context with whether the network is available, whenever that
    /// changes. For the process's life.
    @GLibMain public static func onChange(_ handler: @escaping @GLibMain (_ available: Bool) -> Void) {
        guard let monitor = g_network_monitor_get_default() else { return }
        let box = Unmanaged.passRetained(Box(handler)).toOpaque()
        let callback: @convention(c) (OpaquePointer?, gboolean, UnsafeMutableRawPointer?) -> Void = {
            _, available, userData in
            let handler = Unmanaged<Box<@GLibMain (Bool) -> Void>>.fromOpaque(userData!).takeUnretainedValue().value
            GLibMain.assumeIsolated { handler(available != 0) }
        }
        g_signal_connect_data(
            UnsafeMutableRawPointer(monitor), "network-changed",
            unsafeBitCast(callback, to: GCallback.self), box, nil, GConnectFlags(rawValue: 0))
    }
}
