/// Whether a Matroska or WebM file says how long it is: its Segment's Info has a Duration. A file
/// recorded as a stream (a browser's MediaRecorder, `webmmux streamable=true`) has none, and the
/// duration GStreamer then guesses from the first seconds can be far off; such a file goes
/// without one.
public enum MatroskaHead {
    static let ebml: UInt32 = 0x1A45_DFA3
    static let segment: UInt32 = 0x1853_8067
    static let info: UInt32 = 0x1549_A966
    static let cluster: UInt32 = 0x1F43_B675
    static let duration: UInt32 = 0x4489

    /// From the file's first bytes (64 KB reach the Info of any file muxers write): true or false
    /// when they show the Info, nil when they are not Matroska or do not reach it.
    public static func declaresDuration(_ bytes: [UInt8]) -> Bool? {
        var at = 0
        guard let header = element(bytes, at: &at), header.id == ebml, let headerSize = header.size else { return nil }
        at += headerSize
        guard let body = element(bytes, at: &at), body.id == segment else { return nil }
        // The Segment's children, up to the first Cluster (the media itself): Info is before it.
        while let child = element(bytes, at: &at) {
            if child.id == cluster { return nil }
            guard let size = child.size else { return nil }
            if child.id == info {
                var inner = at
                let end = min(at + size, bytes.count)
                while inner < end, let field = element(bytes, at: &inner), let fieldSize = field.size {
                    if field.id == duration { return true }
                    inner += fieldSize
                }
                return end == at + size ? false : nil
            }
            at += size
        }
        return nil
    }

    /// The element at `at`: its id and its size (nil: unknown, as a live stream's Segment says);
    /// `at` moved to its content.
    static func element(_ bytes: [UInt8], at: inout Int) -> (id: UInt32, size: Int?)? {
        guard at < bytes.count, bytes[at] != 0 else { return nil }
        let idLength = bytes[at].leadingZeroBitCount + 1
        guard idLength <= 4, at + idLength <= bytes.count else { return nil }
        var id: UInt32 = 0
        for byte in bytes[at..<at + idLength] { id = id << 8 | UInt32(byte) }
        var next = at + idLength
        guard next < bytes.count, bytes[next] != 0 else { return nil }
        let sizeLength = bytes[next].leadingZeroBitCount + 1
        guard next + sizeLength <= bytes.count else { return nil }
        var size = UInt64(bytes[next]) & (0xFF >> UInt64(sizeLength))
        var allOnes = size == (0xFF >> UInt64(sizeLength))
        for byte in bytes[next + 1..<next + sizeLength] {
            size = size << 8 | UInt64(byte)
            allOnes = allOnes && byte == 0xFF
        }
        next += sizeLength
        at = next
        if allOnes { return (id, nil) }
        guard size < 1 << 40 else { return nil }
        return (id, Int(size))
    }
}
