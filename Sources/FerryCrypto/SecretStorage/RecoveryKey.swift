import Crypto

/// A secret storage key as a person keeps it: `0x8B 0x01`, the 32 key bytes and a parity byte
/// (the XOR of all before it), in base58, in groups of four characters ("EsTc …"). The
/// prefix and parity catch a mistyped or half-pasted key before any server is asked.
public struct RecoveryKey: Sendable {
    /// The secret storage key itself. Used and dropped: nothing keeps it, and swift-crypto zeroes
    /// its bytes when it is released.
    public let key: SymmetricKey

    static let prefix: [UInt8] = [0x8B, 0x01]

    /// The recovery key of a 256-bit secret storage key.
    public init(key: SymmetricKey) {
        precondition(key.bitCount == 256, "a secret storage key is 32 bytes")
        self.key = key
    }

    /// The key `text` spells, spaces and line breaks anywhere ignored.
    public init(decoding text: String) throws(Problem) {
        let compact = String(text.filter { !$0.isWhitespace })
        guard !compact.isEmpty else { throw .empty }
        // A key is 48 characters; a longer text is not one, and is not decoded at all.
        guard compact.count <= 64 else { throw .wrongLength }
        var bytes: [UInt8]
        switch Base58.decode(compact) {
        case .success(let decoded): bytes = decoded
        case .failure(let bad): throw .notBase58(bad.character)
        }
        defer { wipe(&bytes) }
        guard bytes.count == Self.prefix.count + 32 + 1 else { throw .wrongLength }
        guard Array(bytes.prefix(2)) == Self.prefix else { throw .notARecoveryKey }
        guard bytes.reduce(0, ^) == 0 else { throw .parity }
        key = bytes.withUnsafeBufferPointer { SymmetricKey(data: $0[2..<34]) }
    }

    /// How a person is shown the key: base58 in groups of four.
    public var encoded: String {
        var bytes = Self.prefix + key.withUnsafeBytes { Array($0) }
        bytes.append(bytes.reduce(0, ^))
        defer { wipe(&bytes) }
        let text = Array(Base58.encode(bytes))
        return stride(from: 0, to: text.count, by: 4).map { String(text[$0..<min($0 + 4, text.count)]) }.joined(
            separator: " ")
    }

    /// Why a text is not a recovery key, in words for the person who typed it.
    public enum Problem: Error, Equatable, Sendable {
        /// Nothing but spaces was given.
        case empty
        /// A character that base58 does not have (0, O, I, l, punctuation).
        case notBase58(Character)
        /// Too short or too long: not all of it was copied, or more than it.
        case wrongLength
        /// The right length, another prefix: some other base58 text.
        case notARecoveryKey
        /// The check byte does not match: a typo.
        case parity

        /// The problem in a sentence for the person who typed the key.
        public var sentence: String {
            switch self {
            case .empty: return "No recovery key was given."
            case .notBase58:
                // The character itself is part of a secret: not repeated in a message.
                return "That is not a recovery key: they have only letters and digits, without 0, O, I and l."
            case .wrongLength: return "That recovery key is too short or too long: check that all of it was copied."
            case .notARecoveryKey: return "That is not a Matrix recovery key (they begin with “Es”)."
            case .parity: return "That recovery key has a typo: its check digit does not match."
            }
        }
    }
}
