import CGLib

/// Linux system calls Swift's Glibc module does not expose.
public enum KernelCopy {
    /// copy_file_range(2) from the current offsets: bytes copied, 0 at end of file, -1 with errno set.
    public static func copyRange(from source: Int32, to target: Int32, count: Int) -> Int {
        copy_file_range(source, nil, target, nil, count, 0)
    }
}

extension KernelCopy {
    /// syncfs(2): flushes the file system holding `fd` to disk, once for many files.
    @discardableResult
    public static func syncFileSystem(of fd: Int32) -> Int32 { syncfs(fd) }
}
