/// Key material in a kept state, encoded as one base64 string rather than an array of numbers:
/// the state is sealed and opened on every event sent into an encrypted room, and a JSON array
/// of numbers is several times slower to write and read.
@propertyWrapper
public struct KeptBytes: Codable, Sendable, Equatable {
    /// The bytes.
    public var wrappedValue: [UInt8]

    /// Wraps `wrappedValue`.
    public init(wrappedValue: [UInt8]) { self.wrappedValue = wrappedValue }

    /// Reads the base64 string (an array of numbers, as states were first kept, too).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let text = try? container.decode(String.self) {
            guard let bytes = UnpaddedBase64.decode(text) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "not base64")
            }
            wrappedValue = bytes
        } else {
            wrappedValue = try container.decode([UInt8].self)
        }
    }

    /// Writes the bytes as unpadded base64.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(UnpaddedBase64.encode(wrappedValue))
    }
}
