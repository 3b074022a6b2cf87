import FerryCore
import GLibAdapter
#if canImport(Glibc)
import Glibc
#endif

enum FileCopyError: Error {
    case tooLarge(UInt64)
    case io(Int32)
    case emptied
}

/// Copying bytes between descriptors the cheapest way the kernel offers: a reflink clone (btrfs,
/// XFS: no data copied), then for a large file writes past the page cache (DirectCopy), then
/// copy_file_range (in-kernel, may offload), then plain read/write.
enum FileCopy {
    /// `FICLONE` from linux/fs.h, `_IOW(0x94, 9, int)`; C macros are not importable.
    static let ficlone: UInt = 0x4004_9409
    static let sniffLength = 4096
    /// How much one read or write moves (also DirectCopy's, a whole number of blocks).
    static let chunk = 1 << 20

    /// Copies everything from `source` and returns the number of bytes copied; `copied` hears the
    /// running total after each chunk, and the chunk's bytes where they passed through memory
    /// (someone may be reading the target as it grows).
    @discardableResult
    static func copy(
        from source: Int32, to target: Int32, limit: UInt64,
        copied: (UInt64, UnsafeRawBufferPointer) -> Void = { _, _ in }
    ) throws -> UInt64 {
        var info = stat()
        if ioctl(target, ficlone, source) == 0, fstat(target, &info) == 0 {
            if UInt64(info.st_size) > limit { throw FileCopyError.tooLarge(UInt64(info.st_size)) }
            return UInt64(info.st_size)
        }
        if fstat(source, &info) == 0, UInt64(info.st_size) >= DirectIO.minimumSize,
            let total = try DirectCopy.copy(from: source, to: target, limit: limit, copied: copied)
        {
            return total
        }
        var total: UInt64 = 0
        var useCopyRange = true
        var buffer: UnsafeMutableRawPointer?
        defer { buffer?.deallocate() }
        while true {
            var count: Int
            if useCopyRange {
                count = KernelCopy.copyRange(from: source, to: target, count: chunk)
                if count < 0 && (errno == EXDEV || errno == ENOSYS || errno == EINVAL || errno == EOPNOTSUPP) {
                    useCopyRange = false
                    continue
                }
            } else {
                if buffer == nil { buffer = UnsafeMutableRawPointer.allocate(byteCount: chunk, alignment: 16) }
                count = read(source, buffer, chunk)
                if count > 0 { try writeAll(target, buffer!, count) }
            }
            if count < 0 {
                if errno == EINTR { continue }
                throw FileCopyError.io(errno)
            }
            if count == 0 { return total }
            total += UInt64(count)
            // The file may grow while it is copied; stop once it is past the limit.
            if total > limit { throw FileCopyError.tooLarge(total) }
            copied(total, UnsafeRawBufferPointer(start: useCopyRange ? nil : buffer, count: useCopyRange ? 0 : count))
        }
    }

    /// Reads until `count` bytes are in the buffer or the file ends; returns the bytes read.
    static func readFull(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) throws -> Int {
        var filled = 0
        while filled < count {
            let result = read(fd, buffer + filled, count - filled)
            if result < 0 {
                if errno == EINTR { continue }
                throw FileCopyError.io(errno)
            }
            if result == 0 { break }
            filled += result
        }
        return filled
    }

    static func writeAll(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) throws {
        var written = 0
        while written < count {
            let result = write(fd, buffer + written, count - written)
            if result < 0 {
                if errno == EINTR { continue }
                throw FileCopyError.io(errno)
            }
            written += result
        }
    }

    /// The first bytes of a file, read with pread so the descriptor's offset does not matter.
    static func leadingBytes(of fd: Int32) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: sniffLength)
        let count = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, sniffLength, 0) }
        return Array(bytes.prefix(max(0, count)))
    }
}
