/// Base58 with Bitcoin's alphabet (no 0, O, I or l): how recovery keys are written for people.
/// An encoding, not a cipher; the numbers here are at most 35 bytes long, so the schoolbook
/// conversion is plenty.
enum Base58 {
    static let alphabet = Array("123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        var digits: [UInt8] = [] // base-58 digits, least significant first
        for byte in bytes {
            var carry = Int(byte)
            for index in digits.indices {
                carry += Int(digits[index]) << 8
                digits[index] = UInt8(carry % 58)
                carry /= 58
            }
            while carry > 0 { digits.append(UInt8(carry % 58)); carry /= 58 }
        }
        let zeros = bytes.prefix(while: { $0 == 0 }).count
        return String(
            decoding: Array(repeating: alphabet[0], count: zeros) + digits.reversed().map { alphabet[Int($0)] },
            as: UTF8.self)
    }

    /// A character that is not a base58 digit.
    struct NotADigit: Error { let character: Character }

    /// The bytes, or the first character that is not a base58 digit.
    static func decode(_ text: String) -> Result<[UInt8], NotADigit> {
        var bytes: [UInt8] = [] // least significant first
        for character in text {
            guard let ascii = character.asciiValue, let digit = alphabet.firstIndex(of: ascii) else {
                return .failure(NotADigit(character: character))
            }
            var carry = digit
            for index in bytes.indices {
                carry += Int(bytes[index]) * 58
                bytes[index] = UInt8(carry & 0xFF)
                carry >>= 8
            }
            while carry > 0 { bytes.append(UInt8(carry & 0xFF)); carry >>= 8 }
        }
        let zeros = text.prefix(while: { $0 == "1" }).count
        return .success(Array(repeating: 0, count: zeros) + bytes.reversed())
    }
}
