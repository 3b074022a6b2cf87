import CGtk

/// Closure-based signal connection: macros such as g_signal_connect are not importable, so each
/// handler shape is a @convention(c) function cast to GCallback, with the closure as user data.
enum Signals {
    final class Handler {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }

    final class BoolHandler {
        let body: () -> Bool
        init(_ body: @escaping () -> Bool) { self.body = body }
    }

    /// `void handler(instance, user_data)`
    @discardableResult
    static func connect(_ instance: UnsafeMutableRawPointer, _ signal: String, _ body: @escaping () -> Void) -> Handler
    {
        let handler = Handler(body)
        let callback: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Void = { _, data in
            Unmanaged<Handler>.fromOpaque(data!).takeUnretainedValue().body()
        }
        connect(instance, signal, unsafeBitCast(callback, to: GCallback.self), handler)
        return handler
    }

    /// `void handler(instance, argument, user_data)`
    @discardableResult
    static func connectWithArgument(
        _ instance: UnsafeMutableRawPointer, _ signal: String,
        _ body: @escaping () -> Void
    ) -> Handler {
        let handler = Handler(body)
        let callback:
            @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Void = {
                _, _, data in
                Unmanaged<Handler>.fromOpaque(data!).takeUnretainedValue().body()
            }
        connect(instance, signal, unsafeBitCast(callback, to: GCallback.self), handler)
        return handler
    }

    /// `gboolean handler(instance, user_data)`: "close-request" and the like.
    @discardableResult
    static func connectReturningBool(
        _ instance: UnsafeMutableRawPointer, _ signal: String,
        _ body: @escaping () -> Bool
    ) -> BoolHandler {
        let handler = BoolHandler(body)
        let callback: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> gboolean = { _, data in
            Unmanaged<BoolHandler>.fromOpaque(data!).takeUnretainedValue().body() ? 1 : 0
        }
        connect(instance, signal, unsafeBitCast(callback, to: GCallback.self), handler)
        return handler
    }

    /// The closure is retained by the connection and released when it is destroyed.
    private static func connect(
        _ instance: UnsafeMutableRawPointer, _ signal: String, _ callback: GCallback,
        _ handler: AnyObject
    ) {
        g_signal_connect_data(
            instance, signal, callback, Unmanaged.passRetained(handler).toOpaque(),
            { data, _ in Unmanaged<AnyObject>.fromOpaque(data!).release() },
            GConnectFlags(rawValue: 0))
    }
}
