import CGLib
import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// Passwords in the Secret Service (GNOME Keyring, KWallet, KeePassXC) through libsecret, by a
/// schema name and string attributes.
public struct SecretService: Sendable {
    public let schema: String
    /// How long a call may take before it is given up: an unlocked keyring answers at once; a
    /// locked one may wait for a prompt nobody can see (no display), and Ferry must not hang.
    public var timeoutSeconds: Double = 5

    public init(schema: String) { self.schema = schema }

    public func store(label: String, attributes: [String: String], secret: String) throws(GLibError) {
        _ = try withSchema(attributes) { library, schema, table, cancellable, error in
            library.storev(schema, table, nil, label, secret, cancellable, &error) != 0 ? "" : nil
        }
    }

    public func lookup(attributes: [String: String]) throws(GLibError) -> String? {
        try withSchema(attributes) { library, schema, table, cancellable, error in
            guard let found = library.lookupv(schema, table, cancellable, &error) else { return nil }
            defer { library.free(found) }
            return String(cString: found)
        }
    }

    public func clear(attributes: [String: String]) throws(GLibError) {
        _ = try withSchema(attributes) { library, schema, table, cancellable, error in
            _ = library.clearv(schema, table, cancellable, &error)
            return nil
        }
    }

    private func withSchema(
        _ attributes: [String: String],
        _ body: (
            LibSecret, OpaquePointer?, OpaquePointer?, UnsafeMutablePointer<GCancellable>?,
            inout UnsafeMutablePointer<GError>?
        ) -> String?
    ) throws(GLibError) -> String? {
        guard let library = LibSecret.shared else {
            throw GLibError(
                message: "libsecret (libsecret-1.so.0) is not installed",
                ioErrorCode: Int32(G_IO_ERROR_NOT_SUPPORTED.rawValue))
        }
        let types = g_hash_table_new(g_str_hash, g_str_equal)
        let values = g_hash_table_new(g_str_hash, g_str_equal)
        // The tables borrow these C strings; they live until the call returns.
        let cStrings = attributes.flatMap { [strdup($0.key)!, strdup($0.value)!] }
        defer {
            g_hash_table_unref(types)
            g_hash_table_unref(values)
            cStrings.forEach { free($0) }
        }
        for index in stride(from: 0, to: cStrings.count, by: 2) {
            g_hash_table_insert(
                types, cStrings[index],
                UnsafeMutableRawPointer(bitPattern: Int(LibSecret.attributeString)))
            g_hash_table_insert(values, cStrings[index], cStrings[index + 1])
        }
        let schema = library.schemaNewv(self.schema, LibSecret.schemaNone, types)
        defer { library.schemaUnref(schema) }
        let cancellable = g_cancellable_new()
        defer { g_object_unref(UnsafeMutableRawPointer(cancellable)) }
        let timer = DispatchWorkItem { [cancellable = UnsafeSendable(cancellable)] in
            g_cancellable_cancel(cancellable.value)
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeoutSeconds, execute: timer)
        defer { timer.cancel() }
        var error: UnsafeMutablePointer<GError>?
        let result = body(library, schema, values, cancellable, &error)
        if let error { throw GLibError(consuming: error) }
        return result
    }
}

/// A pointer handed to another thread on purpose (GCancellable is thread-safe).
private struct UnsafeSendable<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}

/// libsecret, opened at its first use instead of linked. Linked, the loader resolved its symbols,
/// and those of libgcrypt and libgpg-error that it brings, at every start of both programs, before
/// a cold start's first reply (docs/PERFORMANCE.md), for a library most starts never call (the
/// token is read in the background, and only when signed in).
/// Declared here rather than imported from its headers: the package's pkg-config would link it.
// @unchecked Sendable: C function pointers into a library that stays loaded, and is thread-safe.
struct LibSecret: @unchecked Sendable {
    /// SecretSchema *, used only as a handle.
    typealias Schema = OpaquePointer?
    typealias ErrorOut = UnsafeMutablePointer<UnsafeMutablePointer<GError>?>?
    let storev:
        @convention(c) (
            Schema, OpaquePointer?, UnsafePointer<CChar>?, UnsafePointer<CChar>?, UnsafePointer<CChar>?,
            UnsafeMutablePointer<GCancellable>?, ErrorOut
        ) -> gboolean
    let lookupv:
        @convention(c) (Schema, OpaquePointer?, UnsafeMutablePointer<GCancellable>?, ErrorOut) -> UnsafeMutablePointer<
            CChar
        >?
    let clearv: @convention(c) (Schema, OpaquePointer?, UnsafeMutablePointer<GCancellable>?, ErrorOut) -> gboolean
    let free: @convention(c) (UnsafeMutablePointer<CChar>?) -> Void
    let schemaNewv: @convention(c) (UnsafePointer<CChar>?, UInt32, OpaquePointer?) -> Schema
    let schemaUnref: @convention(c) (Schema) -> Void

    /// SECRET_SCHEMA_NONE (SecretSchemaFlags) and SECRET_SCHEMA_ATTRIBUTE_STRING (SecretSchemaAttributeType).
    static let schemaNone: UInt32 = 0
    static let attributeString = 0

    /// Loaded once; nil when libsecret is not installed (then there is no Secret Service to ask).
    static let shared = LibSecret()

    private init?() {
        guard let library = dlopen("libsecret-1.so.0", RTLD_NOW | RTLD_LOCAL) else { return nil }
        func symbol<T>(_ name: String, as type: T.Type) -> T? {
            dlsym(library, name).map { unsafeBitCast($0, to: type) }
        }
        guard let storev = symbol("secret_password_storev_sync", as: type(of: storev)),
            let lookupv = symbol("secret_password_lookupv_sync", as: type(of: lookupv)),
            let clearv = symbol("secret_password_clearv_sync", as: type(of: clearv)),
            let free = symbol("secret_password_free", as: type(of: free)),
            let schemaNewv = symbol("secret_schema_newv", as: type(of: schemaNewv)),
            let schemaUnref = symbol("secret_schema_unref", as: type(of: schemaUnref))
        else { return nil }
        (self.storev, self.lookupv, self.clearv, self.free) = (storev, lookupv, clearv, free)
        (self.schemaNewv, self.schemaUnref) = (schemaNewv, schemaUnref)
    }
}
