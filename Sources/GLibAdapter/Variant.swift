import CGLib

/// A D-Bus value as plain Swift data: the shapes Ferry's interfaces use, and nothing of GLib.
///
/// Anything outside these shapes decodes as `.unsupported(typeString)`, so that validation can
/// tell a person which type arrived ("uris must be a list of strings, not 's'").
public indirect enum Variant: Equatable, Sendable {
    case bool(Bool)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(String)
    /// `as`
    case strings([String])
    /// `a{sv}`: each value travels boxed in a variant.
    case dictionary([String: Variant])
    /// `aa{sv}`
    case dictionaries([[String: Variant]])
    /// `(…)`: method arguments and replies are tuples.
    case tuple([Variant])
    /// `v`
    case boxed(Variant)
    /// A value of a type Ferry does not model, kept only as its type string.
    case unsupported(String)

    /// The D-Bus type signature of this value.
    public var typeString: String {
        switch self {
        case .bool: return "b"
        case .int32: return "i"
        case .uint32: return "u"
        case .int64: return "x"
        case .uint64: return "t"
        case .double: return "d"
        case .string: return "s"
        case .objectPath: return "o"
        case .strings: return "as"
        case .dictionary: return "a{sv}"
        case .dictionaries: return "aa{sv}"
        case .tuple(let items): return "(" + items.map(\.typeString).joined() + ")"
        case .boxed: return "v"
        case .unsupported(let type): return type
        }
    }

    public var stringValue: String? { if case .string(let s) = self { return s }; return nil }
    public var boolValue: Bool? { if case .bool(let b) = self { return b }; return nil }
    public var stringsValue: [String]? { if case .strings(let s) = self { return s }; return nil }
    public var dictionaryValue: [String: Variant]? { if case .dictionary(let d) = self { return d }; return nil }
    public var dictionariesValue: [[String: Variant]]? { if case .dictionaries(let d) = self { return d }; return nil }
    public var int64Value: Int64? { if case .int64(let v) = self { return v }; return nil }
    public var uint64Value: UInt64? { if case .uint64(let v) = self { return v }; return nil }
    public var uint32Value: UInt32? { if case .uint32(let v) = self { return v }; return nil }
    /// The members of a tuple, or nil when this is not one.
    public var tupleValue: [Variant]? { if case .tuple(let t) = self { return t }; return nil }
}

// MARK: - To and from GVariant (internal to the adapter)

extension Variant {
    /// A new floating GVariant; hand it to a GLib call that sinks it, or sink it yourself.
    func makeGVariant() -> OpaquePointer {
        switch self {
        case .bool(let v): return g_variant_new_boolean(v ? 1 : 0)
        case .int32(let v): return g_variant_new_int32(v)
        case .uint32(let v): return g_variant_new_uint32(v)
        case .int64(let v): return g_variant_new_int64(gint64(v))
        case .uint64(let v): return g_variant_new_uint64(guint64(v))
        case .double(let v): return g_variant_new_double(v)
        case .string(let v): return g_variant_new_string(v)
        case .objectPath(let v): return g_variant_new_object_path(v)
        case .strings(let list):
            return Self.buildArray(type: "as", list.map { g_variant_new_string($0) })
        case .dictionary(let dict):
            return Self.buildDictionary(dict)
        case .dictionaries(let list):
            return Self.buildArray(type: "aa{sv}", list.map { Self.buildDictionary($0) })
        case .tuple(let items):
            var children: [OpaquePointer?] = items.map { $0.makeGVariant() }
            return children.withUnsafeMutableBufferPointer {
                g_variant_new_tuple($0.baseAddress, gsize($0.count))
            }
        case .boxed(let inner): return g_variant_new_variant(inner.makeGVariant())
        case .unsupported(let type):
            preconditionFailure("cannot encode a value of unsupported type \(type)")
        }
    }

    private static func buildDictionary(_ dict: [String: Variant]) -> OpaquePointer {
        // Sorted keys keep the wire form stable, which makes traces and tests readable.
        let entries = dict.keys.sorted().map { key in
            g_variant_new_dict_entry(g_variant_new_string(key), g_variant_new_variant(dict[key]!.makeGVariant()))!
        }
        return buildArray(type: "a{sv}", entries)
    }

    private static func buildArray(type: String, _ children: [OpaquePointer?]) -> OpaquePointer {
        let variantType = g_variant_type_new(type)
        defer { g_variant_type_free(variantType) }
        let builder = g_variant_builder_new(variantType)
        defer { g_variant_builder_unref(builder) }
        for child in children { g_variant_builder_add_value(builder, child) }
        return g_variant_builder_end(builder)
    }

    /// Reads a GVariant (borrowed, not consumed) into Swift values.
    init(gvariant value: OpaquePointer) {
        let type = String(cString: g_variant_get_type_string(value))
        switch type {
        case "b": self = .bool(g_variant_get_boolean(value) != 0)
        case "i": self = .int32(g_variant_get_int32(value))
        case "u": self = .uint32(g_variant_get_uint32(value))
        case "x": self = .int64(Int64(g_variant_get_int64(value)))
        case "t": self = .uint64(UInt64(g_variant_get_uint64(value)))
        case "d": self = .double(g_variant_get_double(value))
        case "s": self = .string(String(cString: g_variant_get_string(value, nil)))
        case "o": self = .objectPath(String(cString: g_variant_get_string(value, nil)))
        case "v":
            let inner = g_variant_get_variant(value)!
            defer { g_variant_unref(inner) }
            self = .boxed(Variant(gvariant: inner))
        case "as":
            self = .strings(
                Self.mapChildren(of: value) { child in
                    String(cString: g_variant_get_string(child, nil))
                })
        case "a{sv}":
            self = .dictionary(Self.readDictionary(value))
        case "aa{sv}":
            self = .dictionaries(Self.mapChildren(of: value) { Self.readDictionary($0) })
        default:
            if type.hasPrefix("(") {
                self = .tuple(Self.mapChildren(of: value) { Variant(gvariant: $0) })
            } else {
                self = .unsupported(type)
            }
        }
    }

    /// An `a{sv}` from its GVariant serialization, as untrusted bytes: GLib checks them as it reads
    /// (what does not fit the type reads as empty values), as GDBus does for a message's body.
    public static func dictionary(serialized bytes: [UInt8]) -> [String: Variant] {
        let type = g_variant_type_new("a{sv}")
        defer { g_variant_type_free(type) }
        let data = bytes.withUnsafeBytes { g_bytes_new($0.baseAddress, gsize($0.count)) }
        defer { g_bytes_unref(data) }
        guard let value = g_variant_new_from_bytes(type, data, 0) else { return [:] }
        g_variant_ref_sink(value)
        defer { g_variant_unref(value) }
        return readDictionary(value)
    }

    private static func readDictionary(_ value: OpaquePointer) -> [String: Variant] {
        var dict: [String: Variant] = [:]
        _ = mapChildren(of: value) { entry in
            let key = g_variant_get_child_value(entry, 0)!
            let boxed = g_variant_get_child_value(entry, 1)!
            let inner = g_variant_get_variant(boxed)!
            dict[String(cString: g_variant_get_string(key, nil))] = Variant(gvariant: inner)
            g_variant_unref(inner); g_variant_unref(boxed); g_variant_unref(key)
        }
        return dict
    }

    /// Maps each child of a container; a child is only valid inside `body`.
    private static func mapChildren<T>(of value: OpaquePointer, _ body: (OpaquePointer) -> T) -> [T] {
        let count = g_variant_n_children(value)
        var result: [T] = []
        result.reserveCapacity(Int(count))
        for index in 0..<count {
            let child = g_variant_get_child_value(value, index)!
            result.append(body(child))
            g_variant_unref(child)
        }
        return result
    }
}
