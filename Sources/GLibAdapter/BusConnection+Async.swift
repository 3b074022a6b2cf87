import CGLib

extension BusConnection {
    /// Calls a method without waiting: `completion` runs on the caller's thread-default main
    /// context with the reply tuple or the error. For a UI, which must keep drawing meanwhile.
    public func call(
        destination: String, path: String, interface: String, method: String,
        arguments: Variant? = nil, timeoutMilliseconds: Int32 = -1,
        completion: @escaping (Result<Variant, BusError>) -> Void
    ) {
        let box = Unmanaged.passRetained(ReplyHandler(completion)).toOpaque()
        g_dbus_connection_call(
            raw, destination, path, interface, method, arguments?.makeGVariant(), nil,
            G_DBUS_CALL_FLAGS_NONE, timeoutMilliseconds, nil,
            { source, result, userData in
                let handler = Unmanaged<ReplyHandler>.fromOpaque(userData!).takeRetainedValue()
                var error: UnsafeMutablePointer<GError>?
                if let reply = g_dbus_connection_call_finish(OpaquePointer(source), result, &error) {
                    defer { g_variant_unref(reply) }
                    handler.completion(.success(Variant(gvariant: reply)))
                } else {
                    handler.completion(.failure(BusError(consuming: error!)))
                }
            },
            box)
    }

    /// Reads one D-Bus property of an object (org.freedesktop.DBus.Properties.Get), without waiting.
    public func getProperty(
        destination: String, path: String, interface: String, name: String,
        completion: @escaping (Result<Variant, BusError>) -> Void
    ) {
        call(
            destination: destination, path: path, interface: "org.freedesktop.DBus.Properties", method: "Get",
            arguments: .tuple([.string(interface), .string(name)])
        ) { result in
            completion(
                result.map { reply in
                    if case .boxed(let inner)? = reply.tupleValue?.first { return inner }
                    return reply.tupleValue?.first ?? reply
                })
        }
    }
}

private final class ReplyHandler {
    let completion: (Result<Variant, BusError>) -> Void
    init(_ completion: @escaping (Result<Variant, BusError>) -> Void) { self.completion = completion }
}
