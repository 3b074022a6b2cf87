/// Megolm's ratchet: four 32-byte parts R0…R3 and a 32-bit counter.
///
/// Advancing by one rehashes R3; every 2^8 steps R2 is rehashed and R3 derived from it, every 2^16
/// R1, every 2^24 R0. So a reader given the ratchet at index i can reach any later index in at
/// most 4 × 255 HMACs, and nobody can go back. Each step is `R(to) = HMAC-SHA-256(R(from), to)`.
public struct MegolmRatchet: Sendable, Equatable {
    /// The 128 bytes R0‖R1‖R2‖R3.
    public private(set) var bytes: [UInt8]
    /// The index of the next message this ratchet state encrypts or decrypts.
    public private(set) var index: UInt32

    /// A ratchet from its exported parts; nil unless there are exactly 128 bytes.
    public init?(bytes: [UInt8], index: UInt32) {
        guard bytes.count == 128 else { return nil }
        self.bytes = bytes
        self.index = index
    }

    /// A new ratchet from the system's random generator, at index 0.
    static func random() -> MegolmRatchet {
        MegolmRatchet(bytes: randomBytes(128), index: 0)!
    }

    /// Moves forward to `target`, rehashing each part no more than 255 times. Going back is
    /// impossible by design, and is refused.
    public mutating func advance(to target: UInt32) throws(CryptoError) {
        guard target >= index else {
            throw .replayedOrTooFar("a Megolm ratchet cannot go back from \(index) to \(target)")
        }
        for part in 0..<4 {
            let shift = UInt32((3 - part) * 8)
            var steps = ((target >> shift) &- (index >> shift)) & 0xFF
            guard steps > 0 else { continue }
            // All but the last step only bump this part; the last one also reseeds the parts after it.
            while steps > 1 {
                rehash(from: part, to: part)
                steps -= 1
            }
            for later in stride(from: 3, through: part, by: -1) { rehash(from: part, to: later) }
            index = target & (UInt32.max << shift)
        }
    }

    private mutating func rehash(from: Int, to: Int) {
        let next = hmacStep(Array(bytes[from * 32..<from * 32 + 32]), UInt8(to))
        bytes.replaceSubrange(to * 32..<to * 32 + 32, with: next)
    }
}
