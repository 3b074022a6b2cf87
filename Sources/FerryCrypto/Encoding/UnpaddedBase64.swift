import Foundation

/// Matrix's base64: the standard alphabet without `=` padding, for every key, signature and
/// ciphertext. Reading accepts padded input too, as other clients are lenient in the same way.
public enum UnpaddedBase64 {
    /// The unpadded base64 of `bytes`.
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        var text = Data(bytes).base64EncodedString()
        while text.last == "=" { text.removeLast() }
        return text
    }

    /// The bytes `text` encodes, or nil when it is not base64.
    public static func decode(_ text: String) -> [UInt8]? {
        var padded = text.trimmingCharacters(in: CharacterSet(charactersIn: "="))
        guard padded.count % 4 != 1 else { return nil }
        padded += String(repeating: "=", count: (4 - padded.count % 4) % 4)
        return Data(base64Encoded: padded).map { Array($0) }
    }
}
