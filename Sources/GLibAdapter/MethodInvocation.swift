import CGLib

/// One incoming D-Bus method call. Answer it exactly once, from any thread, with
/// `reply(_:)` or `fail(_:)`; the caller waits until then.
public final class MethodInvocation: @unchecked Sendable {
    private let raw: OpaquePointer
    public let method: String
    /// The caller's unique bus name.
    public let sender: String
    /// The arguments, as a tuple.
    public let parameters: Variant
    private var answered = false

    init(raw: OpaquePointer, method: String, sender: String, parameters: Variant) {
        self.raw = raw
        self.method = method
        self.sender = sender
        self.parameters = parameters
    }

    /// The arguments as a list (the members of the parameters tuple).
    public var arguments: [Variant] { parameters.tupleValue ?? [] }

    /// Replies with these out-arguments (none for an empty list).
    public func reply(_ values: [Variant] = []) {
        precondition(!answered, "a method call is answered once")
        answered = true
        // Takes over the invocation's reference.
        g_dbus_method_invocation_return_value(raw, Variant.tuple(values).makeGVariant())
    }

    public func fail(_ error: BusError) {
        precondition(!answered, "a method call is answered once")
        answered = true
        g_dbus_method_invocation_return_dbus_error(raw, error.name, error.message)
    }
}
