/// Share ids: ULIDs in lower case (48 bits of milliseconds, 80 random bits, Crockford base32),
/// so they sort by creation time, read well in a terminal and need no coordination.
public enum ShareID {
    static let alphabet = Array("0123456789abcdefghjkmnpqrstvwxyz".utf8)

    /// A new id for a share made at `milliseconds` since the Unix epoch, with 80 bits from the system's random
    /// generator.
    public static func make(milliseconds: UInt64) -> String {
        var generator = SystemRandomNumberGenerator()
        return make(milliseconds: milliseconds, random: (generator.next(), generator.next()))
    }

    static func make(milliseconds: UInt64, random: (UInt64, UInt64)) -> String {
        // 128 bits: time in the high 48, randomness in the low 80.
        let high = (milliseconds << 16) | (random.0 & 0xFFFF)
        let low = random.1
        var characters: [UInt8] = []
        characters.reserveCapacity(26)
        for index in 0..<26 {
            let shift = 125 - index * 5 // the first character carries the top 3 bits
            let value: UInt64
            if shift >= 64 {
                value = (high >> UInt64(shift - 64)) & 0x1F
            } else if shift > 59 {
                value = ((high << UInt64(64 - shift)) | (low >> UInt64(shift))) & 0x1F
            } else {
                value = (low >> UInt64(shift)) & 0x1F
            }
            characters.append(alphabet[Int(index == 0 ? value & 0x7 : value)])
        }
        return String(decoding: characters, as: UTF8.self)
    }

    /// Whether `text` looks like a share id (for early, friendly refusals).
    public static func isWellFormed(_ text: String) -> Bool {
        text.utf8.count == 26 && text.utf8.allSatisfy { alphabet.contains($0) }
    }
}
