import CGLib
import Glibc

/// How the service's process uses memory: glibc's allocator, and its own code while idle.
public enum MemoryPolicy {
    /// glibc raises its mmap threshold to the largest block freed so far: after the first upload
    /// chunk, chunks come from the heap arenas and stay there, so memory would grow with the size
    /// of what is sent. A fixed threshold gives each large chunk its own mapping, returned to the
    /// system when freed. Two arenas are plenty for the service's few busy threads (the default is
    /// eight per core, each keeping freed memory of its own).
    public static func keepFlat() {
        mallopt(M_MMAP_THRESHOLD, 128 * 1024)
        mallopt(M_ARENA_MAX, 2)
        // Opened now, while it is this user's: once core dumps are off (CoreDumps) it is root's.
        _ = pagemap
    }

    /// /proc/self/pagemap, open for the life of the process (-1 if it could not be opened).
    private static let pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC)

    private static let pageSize = UInt(sysconf(Int32(_SC_PAGESIZE)))

    /// Takes the program's code out of the process's resident memory: the pages of it that a start
    /// or the last calls ran stay mapped otherwise, and the kernel keeps mapped code in memory ahead
    /// of other cached files. Unmapped, they are ordinary page cache, there for the next call (a
    /// minor fault per 64 KB) and free for the kernel to reclaim while the service waits. Only the
    /// executable segment, and only while no page of it has been written: a debugger's breakpoint
    /// or a uprobe lives in a private copy of its page, which MADV_DONTNEED would throw away (the
    /// probe would silently stop working), and the same holds for any data page.
    public static func releaseCode() {
        guard let code = executableSegment(), !anyPageWritten(code) else { return }
        _ = madvise(UnsafeMutableRawPointer(bitPattern: code.lowerBound), code.count, MADV_DONTNEED)
    }

    /// Whether a page of `range` is mapped as a private copy (written since it was mapped), read from
    /// /proc/self/pagemap: present (bit 63) and not file-backed (bit 61). Unknown counts as written.
    private static func anyPageWritten(_ range: Range<UInt>) -> Bool {
        let count = Int(UInt(range.count) / pageSize)
        let fd = pagemap
        guard fd >= 0 else { return true }
        let entries = UnsafeMutableBufferPointer<UInt64>.allocate(capacity: count)
        defer { entries.deallocate() }
        let entry = MemoryLayout<UInt64>.stride
        let size = count * entry
        guard pread(fd, entries.baseAddress, size, off_t(range.lowerBound / pageSize) * off_t(entry)) == size else {
            return true
        }
        let present: UInt64 = 1 << 63, fileBacked: UInt64 = 1 << 61
        return entries.contains { $0 & present != 0 && $0 & fileBacked == 0 }
    }

    /// The program's executable PT_LOAD segment, whole pages only (its first and last may be shared
    /// with the neighbouring segments' mappings). The kernel tells where the program's headers are
    /// (AT_PHDR); PT_PHDR says where they are in the file, which gives the load address.
    private static func executableSegment() -> Range<UInt>? {
        guard let address = UnsafePointer<Elf64_Phdr>(bitPattern: UInt(getauxval(UInt(AT_PHDR)))) else { return nil }
        let headers = UnsafeBufferPointer(start: address, count: Int(getauxval(UInt(AT_PHNUM))))
        guard let table = headers.first(where: { $0.p_type == UInt32(PT_PHDR) }),
            let code = headers.first(where: { $0.p_type == UInt32(PT_LOAD) && $0.p_flags & UInt32(PF_X) != 0 })
        else { return nil }
        let bias = UInt(bitPattern: address) &- UInt(table.p_vaddr)
        let start = (bias &+ UInt(code.p_vaddr) + pageSize - 1) / pageSize * pageSize
        let end = (bias &+ UInt(code.p_vaddr) + UInt(code.p_memsz)) / pageSize * pageSize
        return start < end ? start..<end : nil
    }
}
