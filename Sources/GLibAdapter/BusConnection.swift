import CGLib

/// A connection to the session bus: calls, signals, and objects exported by this process.
///
/// The session connection is GLib's shared singleton, the same one GApplication uses, so an object
/// registered here before the application runs is reachable the moment the bus name is owned.
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
    public func call(destination: String, path: String, interface: String, method: String,
                     arguments: Variant? = nil, timeoutMilliseconds: Int32 = -1) throws -> Variant {
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
           let error {
            g_error_free(error)
        }
    }

    /// Emits `org.freedesktop.DBus.Properties.PropertiesChanged` for one interface.
    public func emitPropertiesChanged(path: String, interface: String, changed: [String: Variant]) {
        emitSignal(path: path, interface: "org.freedesktop.DBus.Properties", name: "PropertiesChanged",
                   arguments: .tuple([.string(interface), .dictionary(changed), .strings([])]))
    }

    /// Subscribes to a signal; the handler runs on the thread-default main context of the caller.
    @discardableResult
    public func subscribe(sender: String?, interface: String, member: String?, path: String?,
                          handler: @escaping (_ member: String, _ arguments: Variant) -> Void) -> UInt32 {
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
    public func register(object path: String, interface: InterfaceDescription,
                         methods: @escaping (MethodInvocation) -> Void,
                         properties: @escaping (_ name: String) -> Variant?) throws {
        let handlers = Unmanaged.passRetained(ObjectHandlers(methods: methods, properties: properties)).toOpaque()
        // GLib copies the vtable; a heap copy keeps this independent of that detail.
        let vtable = UnsafeMutablePointer<GDBusInterfaceVTable>.allocate(capacity: 1)
        vtable.initialize(to: GDBusInterfaceVTable(
            method_call: { _, sender, _, _, method, parameters, invocation, userData in
                let handlers = Unmanaged<ObjectHandlers>.fromOpaque(userData!).takeUnretainedValue()
                handlers.methods(MethodInvocation(raw: invocation!, method: String(cString: method!),
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

/// A parsed D-Bus interface description (introspection XML), kept alive for the process's life.
public final class InterfaceDescription: @unchecked Sendable {
    let node: UnsafeMutablePointer<GDBusNodeInfo>
    let info: UnsafeMutablePointer<GDBusInterfaceInfo>

    public init(xml: String, interface name: String) throws {
        var error: UnsafeMutablePointer<GError>?
        guard let node = g_dbus_node_info_new_for_xml(xml, &error) else { throw GLibError(consuming: error!) }
        guard let info = g_dbus_node_info_lookup_interface(node, name) else {
            g_dbus_node_info_unref(node)
            throw BusError(name: "org.freedesktop.DBus.Error.UnknownInterface", message: "no interface \(name) in the XML")
        }
        self.node = node
        self.info = info
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
