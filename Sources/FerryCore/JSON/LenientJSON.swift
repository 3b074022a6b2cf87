/// A server's answer read as `JSONValue` where one odd number must not lose the whole answer:
/// a fraction or an integer beyond 64 bits becomes `null`. For answers that carry signed objects
/// among much else (`/keys/query`, `/sync`): a signed object with such a number in it no longer
/// matches its signature and is refused by itself, and the rest of the answer is still read.
public struct LenientJSON: Decodable, Sendable {
    /// The answer.
    public let value: JSONValue

    /// Reads any JSON; a number that is not a 64-bit integer is read as `null`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            value = .null
        } else if let flag = try? container.decode(Bool.self) {
            value = .bool(flag)
        } else if let number = try? container.decode(Int64.self) {
            value = .int(number)
        } else if let text = try? container.decode(String.self) {
            value = .string(text)
        } else if let items = try? container.decode([LenientJSON].self) {
            value = .array(items.map(\.value))
        } else if let members = try? container.decode([String: LenientJSON].self) {
            value = .object(members.mapValues(\.value))
        } else if (try? container.decode(Double.self)) != nil {
            value = .null
        } else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not JSON")
        }
    }
}
