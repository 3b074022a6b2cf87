/// What the two people compare: six bytes both devices derived from their shared secret, shown
/// as seven emoji or as three numbers. Both forms read the same bytes from the front, so a client
/// that shows only the numbers and one that shows only the emoji still agree.
public struct ShortAuthenticationString: Sendable, Hashable {
    /// The six bytes HKDF gave (`decimal` uses the first five of them, `emoji` all six).
    public let bytes: [UInt8]

    /// The string from six bytes; nil for any other count.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 6 else { return nil }
        self.bytes = bytes
    }

    /// The bytes as one 48-bit number, first byte highest: the spec counts bits from the front.
    private var bits: UInt64 { bytes.reduce(0) { $0 << 8 | UInt64($1) } }

    /// The first 42 bits as seven groups of six, each a number 0–63 (the spec: "similar to how
    /// one would base64 encode something"); the last six bits are not shown.
    public var emojiNumbers: [Int] {
        (0..<7).map { Int((bits >> UInt64(42 - 6 * $0)) & 0x3F) }
    }

    /// The seven emoji, in order.
    public var emoji: [SasEmoji] { emojiNumbers.map { SasEmoji.table[$0] } }

    /// The first 39 bits as three groups of 13, each plus 1000: three numbers from 1000 to 9191.
    /// The 1000 keeps every number four digits long, so none reads like a shorter one.
    public var decimals: [Int] {
        let forty = bits >> 8
        return (0..<3).map { Int((forty >> UInt64(27 - 13 * $0)) & 0x1FFF) + 1000 }
    }
}
