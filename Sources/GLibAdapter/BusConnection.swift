import CGLib
#if canImport(Glibc)
import Glibc
#endif

/// A connection to the session bus: calls, signals, and objects exported by this process.
///
/// The session connection is GLib's shared singleton, the same one GApplication uses, so an object
/// registered here before the application runs is reachable the moment the bus name is owned.
// @unchecked Sendable: it holds one immutable pointer to a GDBusConnection, which GLib documents as
// thread-safe (calls, signals and registrations may come from any thread).
public final class BusConnection: @unchecked Sendable {
    let raw: OpaquePointer

    private init(raw: OpaquePointer) { self.raw = raw }

    deinit { g_object_unref(UnsafeMutableRawPointer(raw)) }

    /// The shared session-bus connection.
    public static func session() throws -> BusConnection {
        var error: UnsafeMutablePointer<GError>?
        guard let connection = g_bus_get_sync(G_BUS_TYPE_SESSION, nil, &error) else {
            throw BusError(consuming: error!)
        }
        return BusConnection(raw: connection)
    }

    /// Calls a method and waits for its reply. `arguments` must be a tuple (or nil for none).
    /// Service activation happens as usual when `destination` is not running.
    public func call(
        destination: String, path: String, interface: String, method: String,
        arguments: Variant? = nil, timeoutMilliseconds: Int32 = -1
    ) throws -> Variant {
        var error: UnsafeMutablePointer<GError>?
        let reply = g_dbus_connection_call_sync(
            raw, destination, path, interface, method, arguments?.makeGVariant(), nil,
            G_DBUS_CALL_FLAGS_NONE, timeoutMilliseconds, nil, &error)
        guard let reply else { throw BusError(consuming: error!) }
        defer { g_variant_unref(reply) }
        return Variant(gvariant: reply)
    }

    /// Emits a signal; safe from any thread.
    public func emitSignal(path: String, interface: String, name: String, arguments: Variant) {
        var error: UnsafeMutablePointer<GError>?
        if g_dbus_connection_emit_signal(raw, nil, path, interface, name, arguments.makeGVariant(), &error) == 0,
            let error
        {
            g_error_free(error)
        }
    }

    /// Emits `org.freedesktop.DBus.Properties.PropertiesChanged` for one interface.
    public func emitPropertiesChanged(path: String, interface: String, changed: [String: Variant]) {
        emitSignal(
            path: path, interface: "org.freedesktop.DBus.Properties", name: "PropertiesChanged",
            arguments: .tuple([.string(interface), .dictionary(changed), .strings([])]))
    }

    /// Subscribes to a signal; the handler runs on the thread-default main context of the caller.
    @discardableResult
    public func subscribe(
        sender: String?, interface: String, member: String?, path: String?,
        handler: @escaping (_ member: String, _ arguments: Variant) -> Void
    ) -> UInt32 {
        let box = Unmanaged.passRetained(SignalHandlerBox(handler)).toOpaque()
        return g_dbus_connection_signal_subscribe(
            raw, sender, interface, member, path, nil, G_DBUS_SIGNAL_FLAGS_NONE,
            { _, _, _, _, member, parameters, userData in
                let box = Unmanaged<SignalHandlerBox>.fromOpaque(userData!).takeUnretainedValue()
                box.handler(String(cString: member!), Variant(gvariant: parameters!))
            },
            box,
            { userData in Unmanaged<SignalHandlerBox>.fromOpaque(userData!).release() })
    }

    /// Exports one interface of an object. Calls arrive on the main context as `MethodInvocation`s,
    /// which may be answered later from any thread.
    public func register(
        object path: String, interface: InterfaceDescription,
        methods: @escaping (MethodInvocation) -> Void,
        properties: @escaping (_ name: String) -> Variant?
    ) throws {
        let handlers = Unmanaged.passRetained(ObjectHandlers(methods: methods, properties: properties)).toOpaque()
        // GLib copies the vtable; a heap copy keeps this independent of that detail.
        let vtable = UnsafeMutablePointer<GDBusInterfaceVTable>.allocate(capacity: 1)
        vtable.initialize(
            to: GDBusInterfaceVTable(
                method_call: { _, sender, _, _, method, parameters, invocation, userData in
                    let handlers = Unmanaged<ObjectHandlers>.fromOpaque(userData!).takeUnretainedValue()
                    handlers.methods(
                        MethodInvocation(
                            channel: .invocation(invocation!), method: String(cString: method!),
                            sender: sender.map { String(cString: $0) } ?? "",
                            parameters: Variant(gvariant: parameters!)))
                },
                get_property: { _, _, _, _, property, _, userData in
                    let handlers = Unmanaged<ObjectHandlers>.fromOpaque(userData!).takeUnretainedValue()
                    return handlers.properties(String(cString: property!))?.makeGVariant()
                },
                set_property: nil,
                padding: (nil, nil, nil, nil, nil, nil, nil, nil)))
        var error: UnsafeMutablePointer<GError>?
        let id = g_dbus_connection_register_object(raw, path, interface.info, vtable, handlers, nil, &error)
        if id == 0 {
            Unmanaged<ObjectHandlers>.fromOpaque(handlers).release()
            throw BusError(consuming: error!)
        }
    }
}

extension BusConnection {
    /// Takes over one method that GLib implements itself, before GLib sees the call.
    ///
    /// GApplication answers `org.freedesktop.Application.Open` with an empty reply whatever its
    /// `open` handler makes of the URIs, so a caller could never learn that a share was refused.
    /// A message filter sees the call first; the handler answers it like any other method call,
    /// on the main context. Must be installed before the bus name is owned, like `register`.
    public func intercept(
        path: String, interface: String, member: String,
        handler: @escaping (MethodInvocation) -> Void
    ) {
        let target = InterceptedMethod(path: path, interface: interface, member: member, handler: handler)
        let userData = Unmanaged.passRetained(target).toOpaque()
        g_dbus_connection_add_filter(
            raw,
            { connection, message, incoming, userData in
                // Runs on GDBus's worker thread for every message in and out: decide quickly.
                guard incoming != 0, let message,
                    g_dbus_message_get_message_type(message) == G_DBUS_MESSAGE_TYPE_METHOD_CALL
                else { return message }
                let target = Unmanaged<InterceptedMethod>.fromOpaque(userData!).takeUnretainedValue()
                guard target.matches(message) else { return message }
                let body = g_dbus_message_get_body(message)
                let parameters = body.map { Variant(gvariant: $0) } ?? .tuple([])
                let sender = g_dbus_message_get_sender(message).map { String(cString: $0) } ?? ""
                g_object_ref(UnsafeMutableRawPointer(connection))
                // The filter owns `message`; returning nil drops it, and the invocation keeps the reference.
                let invocation = MethodInvocation(
                    channel: .message(connection: connection!, call: message),
                    method: target.member, sender: sender, parameters: parameters)
                MainContext.invoke { target.handler(invocation) }
                return nil
            }, userData, { Unmanaged<InterceptedMethod>.fromOpaque($0!).release() })
    }
}

// @unchecked Sendable: immutable; GDBus calls its filter on its own worker thread, and the handler
// it holds is made for that (it hands the call over to the service's queue).
private final class InterceptedMethod: @unchecked Sendable {
    let path: String
    let interface: String
    let member: String
    let handler: (MethodInvocation) -> Void

    init(path: String, interface: String, member: String, handler: @escaping (MethodInvocation) -> Void) {
        self.path = path
        self.interface = interface
        self.member = member
        self.handler = handler
    }

    func matches(_ message: OpaquePointer) -> Bool {
        guard let path = g_dbus_message_get_path(message), let member = g_dbus_message_get_member(message),
            let interface = g_dbus_message_get_interface(message)
        else { return false }
        return String(cString: member) == self.member && String(cString: interface) == self.interface
            && String(cString: path) == self.path
    }
}

/// A parsed D-Bus interface description (introspection XML), kept alive for the process's life.
// @unchecked Sendable: immutable after parsing; GLib's introspection data is reference-counted
// atomically and only read.
public final class InterfaceDescription: @unchecked Sendable {
    let node: UnsafeMutablePointer<GDBusNodeInfo>
    let info: UnsafeMutablePointer<GDBusInterfaceInfo>

    public convenience init(xml: String, interface name: String) throws {
        try self.init(xml: Array(xml.utf8), interface: name)
    }

    /// From the XML's bytes, with its comments left out before GMarkup reads it: it reads a comment
    /// character by character, and most of Share1.xml is its documentation, read on a cold start's
    /// path (docs/PERFORMANCE.md). D-Bus introspection XML has no CDATA, the only place "<!--" could
    /// mean anything else; what GDBus exports is made from the parsed interface, never the text.
    public init(xml: [UInt8], interface name: String) throws {
        let text = Self.withoutComments(xml)
        var error: UnsafeMutablePointer<GError>?
        let parsed = text.withUnsafeBufferPointer { bytes in
            bytes.baseAddress!.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
                g_dbus_node_info_new_for_xml($0, &error)
            }
        }
        guard let node = parsed else { throw GLibError(consuming: error!) }
        guard let info = g_dbus_node_info_lookup_interface(node, name) else {
            g_dbus_node_info_unref(node)
            throw BusError(
                name: "org.freedesktop.DBus.Error.UnknownInterface", message: "no interface \(name) in the XML")
        }
        self.node = node
        self.info = info
    }

    /// `xml` without its comments, NUL-terminated (strstr finds each end: no byte-wise loop in Swift).
    static func withoutComments(_ xml: [UInt8]) -> [UInt8] {
        let source = xml + [0]
        var text: [UInt8] = []
        text.reserveCapacity(source.count)
        source.withUnsafeBufferPointer { all in
            all.baseAddress!.withMemoryRebound(to: CChar.self, capacity: all.count) { base in
                var rest = UnsafePointer(base)
                // An unterminated comment is kept, for GMarkup to report.
                while let open = strstr(rest, "<!--") as UnsafeMutablePointer<CChar>?,
                    let close = strstr(open + 4, "-->") as UnsafeMutablePointer<CChar>?
                {
                    text.append(contentsOf: UnsafeRawBufferPointer(start: rest, count: UnsafePointer(open) - rest))
                    rest = UnsafePointer(close) + 3
                }
                text.append(contentsOf: UnsafeRawBufferPointer(start: rest, count: strlen(rest) + 1))
            }
        }
        return text
    }
}

private final class ObjectHandlers {
    let methods: (MethodInvocation) -> Void
    let properties: (String) -> Variant?
    init(methods: @escaping (MethodInvocation) -> Void, properties: @escaping (String) -> Variant?) {
        self.methods = methods
        self.properties = properties
    }
}

private final class SignalHandlerBox {
    let handler: (String, Variant) -> Void
    init(_ handler: @escaping (String, Variant) -> Void) { self.handler = handler }
}
