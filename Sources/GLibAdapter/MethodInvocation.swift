import CGLib
import Synchronization

/// One incoming D-Bus method call. Answer it exactly once, from any thread, with
/// `reply(_:)` or `fail(_:)`; the caller waits until then.
// @unchecked Sendable: GDBus lets a method invocation be answered from any thread, and a reply
// message be sent on the (thread-safe) connection from any thread; `answered` is atomic.
public final class MethodInvocation: @unchecked Sendable {
    /// How the answer travels back: through GDBus's invocation object for methods of exported
    /// objects, or as a hand-made reply message for calls taken over by a filter.
    enum Channel {
        case invocation(OpaquePointer)
        case message(connection: OpaquePointer, call: OpaquePointer)
    }

    private let channel: Channel
    public let method: String
    /// The caller's unique bus name.
    public let sender: String
    /// The arguments, as a tuple.
    public let parameters: Variant
    private let answered = Atomic<Bool>(false)

    init(channel: Channel, method: String, sender: String, parameters: Variant) {
        self.channel = channel
        self.method = method
        self.sender = sender
        self.parameters = parameters
    }

    /// The arguments as a list (the members of the parameters tuple).
    public var arguments: [Variant] { parameters.tupleValue ?? [] }

    /// Replies with these out-arguments (none for an empty list).
    public func reply(_ values: [Variant] = []) {
        markAnswered()
        let body = Variant.tuple(values).makeGVariant()
        switch channel {
        case .invocation(let raw):
            // Takes over the invocation's reference.
            g_dbus_method_invocation_return_value(raw, body)
        case .message(let connection, let call):
            let reply = g_dbus_message_new_method_reply(call)!
            g_dbus_message_set_body(reply, body)
            send(reply, on: connection, answering: call)
        }
    }

    public func fail(_ error: BusError) {
        markAnswered()
        switch channel {
        case .invocation(let raw):
            g_dbus_method_invocation_return_dbus_error(raw, error.name, error.message)
        case .message(let connection, let call):
            send(
                g_dbus_message_new_method_error_literal(call, error.name, error.message)!,
                on: connection, answering: call)
        }
    }

    private func markAnswered() {
        precondition(!answered.exchange(true, ordering: .relaxed), "a method call is answered once")
    }

    private func send(_ reply: OpaquePointer, on connection: OpaquePointer, answering call: OpaquePointer) {
        // A caller that asked for no reply (NO_REPLY_EXPECTED) gets none, as GDBus itself does.
        let flags = g_dbus_message_get_flags(call).rawValue
        if flags & G_DBUS_MESSAGE_FLAGS_NO_REPLY_EXPECTED.rawValue == 0 {
            g_dbus_connection_send_message(connection, reply, G_DBUS_SEND_MESSAGE_FLAGS_NONE, nil, nil)
        }
        g_object_unref(UnsafeMutableRawPointer(reply))
        g_object_unref(UnsafeMutableRawPointer(call))
        g_object_unref(UnsafeMutableRawPointer(connection))
    }
}
