import FerryCore
#if canImport(Glibc)
import Glibc
#endif

/// Copies a large file without putting the copy in the page cache (O_DIRECT writes); the upload
/// reads it back the same way (FileChunks), so a large share costs the page cache nothing.
///
/// The original is usually in the page cache already (just saved, just viewed), and a second,
/// cached copy of a 4 GB video would push out what the rest of the desktop is using. It also made
/// the upload slower: memory newly taken for the page cache is the expensive kind (on this VM each
/// fresh page is a fault in the host too), and the homeserver needs plenty of it for the same upload.
enum DirectCopy {
    static let chunk = FileCopy.chunk
    static let alignment = DirectIO.alignment

    /// Copies everything from `source` to the empty `target`; nil, with nothing written, when the
    /// target's file system takes no O_DIRECT (tmpfs, some network file systems).
    static func copy(
        from source: Int32, to target: Int32, limit: UInt64,
        copied: (UInt64, UnsafeRawBufferPointer) -> Void
    ) throws -> UInt64? {
        let flags = fcntl(target, F_GETFL)
        guard DirectIO.flag != 0, flags >= 0, fcntl(target, F_SETFL, flags | DirectIO.flag) == 0 else { return nil }
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: chunk, alignment: alignment)
        defer { buffer.deallocate() }
        var direct = true
        var total: UInt64 = 0
        while true {
            let filled = try FileCopy.readFull(source, buffer, chunk)
            if filled == 0 { return total }
            if direct, filled % alignment != 0 {
                // The tail is not a whole number of blocks: it goes through the page cache.
                _ = fcntl(target, F_SETFL, flags)
                direct = false
            }
            do {
                try FileCopy.writeAll(target, buffer, filled)
            } catch FileCopyError.io(EINVAL) where direct {
                // A file system that took the flag but not the write: the rest goes the usual way,
                // this chunk again from its start (some of it may have been written).
                _ = fcntl(target, F_SETFL, flags)
                direct = false
                guard lseek(target, off_t(total), SEEK_SET) == off_t(total) else { throw FileCopyError.io(errno) }
                try FileCopy.writeAll(target, buffer, filled)
            }
            total += UInt64(filled)
            // The file may grow while it is copied; stop once it is past the limit.
            if total > limit { throw FileCopyError.tooLarge(total) }
            copied(total, UnsafeRawBufferPointer(start: buffer, count: filled))
            if filled < chunk { return total }
        }
    }
}
