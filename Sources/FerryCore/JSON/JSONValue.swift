/// A JSON value as Matrix allows it in signed objects: no floating-point numbers, integers only.
///
/// Signed JSON (device keys, one-time keys, cross-signing signatures) must be re-encoded byte for
/// byte as its signer encoded it, so the value keeps integers as integers and is encoded by
/// `CanonicalJSON`, never by `JSONEncoder` (which formats numbers and escapes as it likes).
public enum JSONValue: Sendable, Hashable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// An integer; Matrix keeps signed JSON within ±(2^53 − 1), and this holds any 64-bit one.
    case int(Int64)
    /// A string, any Unicode.
    case string(String)
    /// An array, in its order.
    case array([JSONValue])
    /// An object; its order is not kept, canonical JSON sorts it.
    case object([String: JSONValue])

    /// The member named `key` of an object; nil for a missing member or a value that is not an object.
    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    /// The string this value holds, if it is one.
    public var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// The integer this value holds, if it is one.
    public var intValue: Int64? {
        if case .int(let number) = self { return number }
        return nil
    }

    /// The elements of an array, if this is one.
    public var arrayValue: [JSONValue]? {
        if case .array(let elements) = self { return elements }
        return nil
    }

    /// The members of an object, if this is one.
    public var objectValue: [String: JSONValue]? {
        if case .object(let members) = self { return members }
        return nil
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByDictionaryLiteral, ExpressibleByArrayLiteral
{
    // Not ExpressibleByNilLiteral: `cond ? nil : value` would then pick JSON null where an
    // absent value was meant (it sent `"device_keys": null` once). JSON null is `.null`.
    /// A string literal as a JSON string.
    public init(stringLiteral value: String) { self = .string(value) }
    /// An integer literal as a JSON number.
    public init(integerLiteral value: Int64) { self = .int(value) }
    /// `true` or `false` as JSON.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// A dictionary literal as a JSON object; a repeated key keeps its last value.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
    /// An array literal as a JSON array.
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
}

extension JSONValue: Codable {
    /// Decodes any JSON but a fractional or out-of-range number, which signed Matrix JSON never holds.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let flag = try? container.decode(Bool.self) {
            self = .bool(flag)
        } else if let number = try? container.decode(Int64.self) {
            self = .int(number)
        } else if let text = try? container.decode(String.self) {
            self = .string(text)
        } else if let items = try? container.decode([JSONValue].self) {
            self = .array(items)
        } else if let members = try? container.decode([String: JSONValue].self) {
            self = .object(members)
        } else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "not a JSON value Matrix signs (a fraction?)")
        }
    }

    /// Encodes the value for `JSONEncoder` (for requests; signatures use `CanonicalJSON`).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let flag): try container.encode(flag)
        case .int(let number): try container.encode(number)
        case .string(let text): try container.encode(text)
        case .array(let items): try container.encode(items)
        case .object(let members): try container.encode(members)
        }
    }
}
