/// The pixel size of an image from the first bytes of its file, for `m.image`'s `info.w` / `info.h`
/// (clients lay out the picture before it loads). PNG, GIF, JPEG and WebP; nil for anything else.
public enum ImageSize {
    /// The width and height in pixels from an image's first bytes, or nil when they are not a PNG, GIF, JPEG or WebP
    /// head.
    public static func of(_ bytes: [UInt8]) -> (width: Int, height: Int)? {
        png(bytes) ?? gif(bytes) ?? jpeg(bytes) ?? webp(bytes)
    }

    static func png(_ b: [UInt8]) -> (Int, Int)? {
        // Signature, then the IHDR chunk: width and height as 32-bit big-endian at 16 and 20.
        guard b.count >= 24, b[0..<8] == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A],
            b[12..<16] == [0x49, 0x48, 0x44, 0x52]
        else { return nil }
        return (be32(b, 16), be32(b, 20))
    }

    static func gif(_ b: [UInt8]) -> (Int, Int)? {
        guard b.count >= 10, b[0..<3] == [0x47, 0x49, 0x46] else { return nil }
        return (Int(b[6]) | Int(b[7]) << 8, Int(b[8]) | Int(b[9]) << 8)
    }

    static func jpeg(_ b: [UInt8]) -> (Int, Int)? {
        guard b.count >= 4, b[0] == 0xFF, b[1] == 0xD8 else { return nil }
        var index = 2
        while index + 9 < b.count {
            guard b[index] == 0xFF else { return nil }
            let marker = b[index + 1]
            if marker == 0xFF { index += 1; continue }
            let length = Int(b[index + 2]) << 8 | Int(b[index + 3])
            // SOF0–SOF15 carry the frame size, except DHT (C4), JPG (C8) and DAC (CC).
            if (0xC0...0xCF).contains(marker), ![0xC4, 0xC8, 0xCC].contains(marker) {
                return (Int(b[index + 7]) << 8 | Int(b[index + 8]), Int(b[index + 5]) << 8 | Int(b[index + 6]))
            }
            index += 2 + length
        }
        return nil
    }

    static func webp(_ b: [UInt8]) -> (Int, Int)? {
        guard b.count >= 30, b[0..<4] == [0x52, 0x49, 0x46, 0x46], b[8..<12] == [0x57, 0x45, 0x42, 0x50] else {
            return nil
        }
        switch (b[12], b[13], b[14], b[15]) {
        case (0x56, 0x50, 0x38, 0x20): // "VP8 ": lossy, 14-bit sizes at 26
            return (Int(b[26]) | Int(b[27] & 0x3F) << 8, Int(b[28]) | Int(b[29] & 0x3F) << 8)
        case (0x56, 0x50, 0x38, 0x4C): // "VP8L": lossless, 14-bit sizes packed from 21
            let bits = Int(b[21]) | Int(b[22]) << 8 | Int(b[23]) << 16 | Int(b[24]) << 24
            return ((bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1)
        case (0x56, 0x50, 0x38, 0x58): // "VP8X": extended, 24-bit sizes minus one at 24
            return (
                (Int(b[24]) | Int(b[25]) << 8 | Int(b[26]) << 16) + 1,
                (Int(b[27]) | Int(b[28]) << 8 | Int(b[29]) << 16) + 1
            )
        default: return nil
        }
    }

    private static func be32(_ b: [UInt8], _ at: Int) -> Int {
        Int(b[at]) << 24 | Int(b[at + 1]) << 16 | Int(b[at + 2]) << 8 | Int(b[at + 3])
    }
}
