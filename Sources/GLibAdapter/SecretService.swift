import CGLib
import CSecret
import Dispatch

/// Passwords in the Secret Service (GNOME Keyring, KWallet, KeePassXC) through libsecret, by a
/// schema name and string attributes.
public struct SecretService: Sendable {
    public let schema: String
    /// How long a call may take before it is given up: an unlocked keyring answers at once; a
    /// locked one may wait for a prompt nobody can see (no display), and Ferry must not hang.
    public var timeoutSeconds: Double = 5

    public init(schema: String) { self.schema = schema }

    public func store(label: String, attributes: [String: String], secret: String) throws(GLibError) {
        _ = try withSchema(attributes) { schema, table, cancellable, error in
            secret_password_storev_sync(schema, table, nil, label, secret, cancellable, &error) != 0 ? "" : nil
        }
    }

    public func lookup(attributes: [String: String]) throws(GLibError) -> String? {
        try withSchema(attributes) { schema, table, cancellable, error in
            guard let found = secret_password_lookupv_sync(schema, table, cancellable, &error) else { return nil }
            defer { secret_password_free(found) }
            return String(cString: found)
        }
    }

    public func clear(attributes: [String: String]) throws(GLibError) {
        _ = try withSchema(attributes) { schema, table, cancellable, error in
            _ = secret_password_clearv_sync(schema, table, cancellable, &error)
            return nil
        }
    }

    private func withSchema(_ attributes: [String: String],
                            _ body: (UnsafeMutablePointer<SecretSchema>?, OpaquePointer?, UnsafeMutablePointer<GCancellable>?,
                                     inout UnsafeMutablePointer<GError>?) -> String?) throws(GLibError) -> String? {
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
            g_hash_table_insert(types, cStrings[index],
                                UnsafeMutableRawPointer(bitPattern: Int(SECRET_SCHEMA_ATTRIBUTE_STRING.rawValue)))
            g_hash_table_insert(values, cStrings[index], cStrings[index + 1])
        }
        let schema = secret_schema_newv(self.schema, SECRET_SCHEMA_NONE, types)
        defer { secret_schema_unref(schema) }
        let cancellable = g_cancellable_new()
        defer { g_object_unref(UnsafeMutableRawPointer(cancellable)) }
        let timer = DispatchWorkItem { [cancellable = UnsafeSendable(cancellable)] in g_cancellable_cancel(cancellable.value) }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeoutSeconds, execute: timer)
        defer { timer.cancel() }
        var error: UnsafeMutablePointer<GError>?
        let result = body(schema, values, cancellable, &error)
        if let error { throw GLibError(consuming: error) }
        return result
    }
}

/// A pointer handed to another thread on purpose (GCancellable is thread-safe).
private struct UnsafeSendable<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}
