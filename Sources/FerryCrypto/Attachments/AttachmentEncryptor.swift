import FerryCore
import Crypto
import Foundation
import _CryptoExtras

/// An encrypted attachment as the spec defines it (`v2`): AES-256-CTR under a fresh key and IV,
/// the SHA-256 of the ciphertext, and the JWK that `m.room.encrypted`'s content carries as `file`
/// (or `thumbnail_file`) in place of `url`.
///
/// Streaming: the file passes through in chunks, each encrypted at its own counter and hashed as
/// it goes, so memory stays flat whatever the file's size. Chunks must be whole AES blocks (16
/// bytes) but for the last.
public struct AttachmentEncryptor: Sendable {
    /// The AES-256 key, fresh for every file.
    let key: SymmetricKey
    /// The first counter block: 8 random bytes and a 64-bit counter starting at zero, so that a
    /// file of any size never wraps the counter into the random half.
    let iv: [UInt8]
    private var hash = SHA256()
    /// Bytes encrypted so far.
    public private(set) var offset: UInt64 = 0
    private var finished = false

    /// A new encryptor with a fresh key and IV.
    public init() {
        key = SymmetricKey(size: .bits256)
        iv = randomBytes(8) + [UInt8](repeating: 0, count: 8)
    }

    /// An encryptor with a given key and IV: for reading back and for known-answer tests.
    public init(key: [UInt8], iv: [UInt8]) throws(CryptoError) {
        guard key.count == 32, iv.count == 16 else { throw .malformed("an attachment key of 32 bytes and an IV of 16") }
        self.key = SymmetricKey(data: key)
        self.iv = iv
    }

    /// Encrypts the next chunk. Every chunk but the last must be a multiple of 16 bytes long.
    public mutating func encrypt(_ chunk: [UInt8]) throws(CryptoError) -> [UInt8] {
        guard !finished else { throw .malformed("a chunk after the last one (not a multiple of 16 bytes)") }
        if chunk.count % 16 != 0 { finished = true }
        guard !chunk.isEmpty else { return [] }
        let nonce: AES._CTR.Nonce
        do { nonce = try AES._CTR.Nonce(nonceBytes: Self.counterBlock(iv, plus: offset / 16)) } catch {
            throw .malformed("an attachment IV")
        }
        guard let out = try? AES._CTR.encrypt(chunk, using: key, nonce: nonce) else {
            throw .malformed("an attachment chunk")
        }
        let ciphertext = Array(out)
        hash.update(data: ciphertext)
        offset += UInt64(chunk.count)
        return ciphertext
    }

    /// Encrypts the next chunk where it lies, in slices of 64 KiB: the process keeps large blocks
    /// out of the heap (each its own mapping, a page fault per 4 KiB), and a whole chunk at a time
    /// would map and fault twice per chunk. Same rules as `encrypt`.
    public mutating func encrypt(inPlace buffer: UnsafeMutableRawBufferPointer) throws(CryptoError) {
        guard !finished else { throw .malformed("a chunk after the last one (not a multiple of 16 bytes)") }
        if buffer.count % 16 != 0 { finished = true }
        var start = 0
        while start < buffer.count {
            let end = min(start + Self.slice, buffer.count)
            let nonce: AES._CTR.Nonce
            do { nonce = try AES._CTR.Nonce(nonceBytes: Self.counterBlock(iv, plus: offset / 16)) } catch {
                throw .malformed("an attachment IV")
            }
            let target = UnsafeMutableRawBufferPointer(rebasing: buffer[start..<end])
            guard let out = try? AES._CTR.encrypt(UnsafeRawBufferPointer(target), using: key, nonce: nonce) else {
                throw .malformed("an attachment chunk")
            }
            hash.update(data: out)
            out.copyBytes(to: target)
            offset += UInt64(end - start)
            start = end
        }
    }

    /// Bytes encrypted in one call of `encrypt(inPlace:)`: a whole number of AES blocks, under
    /// the process's mmap threshold.
    static let slice = 64 * 1024

    /// The `file` object for the event, once the whole file went through `encrypt` and its
    /// ciphertext was uploaded to `url`.
    public func file(url: String) -> JSONValue {
        let digest = hash.finalize()
        return [
            "v": "v2",
            "url": .string(url),
            "key": [
                "kty": "oct", "alg": "A256CTR", "ext": true, "key_ops": ["encrypt", "decrypt"],
                "k": .string(Self.base64URL(key.withUnsafeBytes { Array($0) })),
            ],
            "iv": .string(UnpaddedBase64.encode(iv)),
            "hashes": ["sha256": .string(UnpaddedBase64.encode(digest))],
        ]
    }

    /// The SHA-256 of the ciphertext so far, base64 (what `hashes.sha256` will say).
    public var ciphertextSHA256: String { UnpaddedBase64.encode(hash.finalize()) }

    /// The IV plus `blocks`, as a 128-bit big-endian counter (what AES-CTR does between blocks).
    static func counterBlock(_ iv: [UInt8], plus blocks: UInt64) -> [UInt8] {
        var block = iv
        var carry = blocks
        var position = 15
        while carry > 0 && position >= 0 {
            let sum = UInt64(block[position]) + (carry & 0xFF)
            block[position] = UInt8(sum & 0xFF)
            carry = (carry >> 8) + (sum >> 8)
            position -= 1
        }
        return block
    }

    /// JWK's `k`: base64url without padding.
    static func base64URL(_ bytes: [UInt8]) -> String {
        UnpaddedBase64.encode(bytes).replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
    }
}
