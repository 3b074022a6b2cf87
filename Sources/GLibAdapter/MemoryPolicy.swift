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
    }

    /// Takes the program's code out of the process's working set: the pages of it that a start or
    /// the last calls ran stay mapped otherwise, and the kernel keeps mapped code in memory ahead
    /// of other cached files. Unmapped, they are ordinary page cache, there for the next call (a
    /// minor fault per 64 KB) and free for the kernel to reclaim while the service waits. Only the
    /// executable segment: it is never written, so the file holds exactly what was mapped (a data
    /// page dropped this way would lose what the process wrote there). Except under a debugger,
    /// which writes its breakpoints into code pages: dropped, they would silently stop working.
    public static func releaseCode() {
        guard !isTraced(), let code = executableSegment() else { return }
        _ = madvise(UnsafeMutableRawPointer(bitPattern: code.lowerBound), code.count, MADV_DONTNEED)
    }

    /// Whether a debugger (ptrace) is attached: /proc/self/status's TracerPid is not 0. Read with
    /// the C library: a String split here would cost more than the rest of the idle exit.
    private static func isTraced() -> Bool {
        var contents: UnsafeMutablePointer<gchar>? = nil
        guard g_file_get_contents("/proc/self/status", &contents, nil, nil) != 0, let contents else { return false }
        defer { g_free(contents) }
        guard let field = strstr(contents, "\nTracerPid:") else { return false }
        return strtol(field + "\nTracerPid:".utf8.count, nil, 10) != 0
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
        let page = UInt(sysconf(Int32(_SC_PAGESIZE)))
        let start = (bias &+ UInt(code.p_vaddr) + page - 1) / page * page
        let end = (bias &+ UInt(code.p_vaddr) + UInt(code.p_memsz)) / page * page
        return start < end ? start..<end : nil
    }
}
