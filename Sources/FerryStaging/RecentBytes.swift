/// The last bytes a copy wrote, kept in memory for a reader close behind it: a ring indexed by
/// file offset modulo its size, holding the file's bytes from `start` to `end`.
struct RecentBytes {
    private var ring: [UInt8] = []
    private(set) var start: UInt64 = 0
    private(set) var end: UInt64 = 0
    let capacity: Int

    init(capacity: Int) { self.capacity = capacity }

    /// Puts `bytes`, the file's up to `end`, at the window's end; the storage is allocated at the
    /// first bytes given. Bytes that do not follow on from the window (the copy gave none for a
    /// while) start it afresh.
    mutating func keep(_ bytes: UnsafeRawBufferPointer, endingAt end: UInt64) {
        guard let source = bytes.baseAddress, bytes.count > 0, UInt64(bytes.count) <= end else { return }
        if ring.isEmpty { ring = [UInt8](repeating: 0, count: capacity) }
        let kept = min(bytes.count, capacity)
        let first = end - UInt64(kept)
        if self.end != end - UInt64(bytes.count) { start = first }
        self.end = end
        start = max(start, end >= UInt64(capacity) ? end - UInt64(capacity) : 0)
        ring.withUnsafeMutableBytes { ring in
            Self.pieces(count: kept, at: Int(first % UInt64(capacity)), ring: capacity) { position, offset, length in
                ring.baseAddress!.advanced(by: position)
                    .copyMemory(from: source.advanced(by: bytes.count - kept + offset), byteCount: length)
            }
        }
    }

    /// Copies bytes from `offset` on, at most `buffer.count`, and returns how many: 0 when the
    /// window does not hold `offset`.
    func copy(at offset: UInt64, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        guard !ring.isEmpty, buffer.count > 0, offset >= start, offset < end else { return 0 }
        let count = Int(min(UInt64(buffer.count), end - offset))
        ring.withUnsafeBytes { ring in
            Self.pieces(count: count, at: Int(offset % UInt64(capacity)), ring: capacity) { position, within, length in
                buffer.baseAddress!.advanced(by: within).copyMemory(
                    from: ring.baseAddress!.advanced(by: position), byteCount: length)
            }
        }
        return count
    }

    /// Lets the storage go: nobody will read from it any more.
    mutating func release() {
        ring = []
        start = end
    }

    /// Splits `count` bytes from ring position `at` into at most two pieces that do not wrap:
    /// `piece(ring position, offset within the bytes, length)`.
    private static func pieces(count: Int, at position: Int, ring: Int, _ piece: (Int, Int, Int) -> Void) {
        let first = min(count, ring - position)
        piece(position, 0, first)
        if count > first { piece(0, first, count - first) }
    }
}
