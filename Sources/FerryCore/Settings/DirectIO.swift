/// O_DIRECT, which Swift's Glibc module does not export (glibc declares it under _GNU_SOURCE) and
/// whose value differs by architecture; 0 where Ferry does not know it, which turns direct I/O off.
public enum DirectIO {
    /// The O_DIRECT flag for open(2) on this architecture, or 0 where it is unknown.
    public static var flag: Int32 {
        #if arch(x86_64)
        return 0o40000
        #elseif arch(arm64)
        return 0o200000
        #else
        return 0
        #endif
    }

    /// Files at least this large are staged and read for upload past the page cache.
    public static let minimumSize: UInt64 = 8 << 20
    /// Buffers, offsets and lengths of direct I/O are whole multiples of this (every block size).
    public static let alignment = 4096
}
