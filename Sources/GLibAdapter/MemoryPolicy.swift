import CGLib

/// How the service's process uses glibc's allocator.
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
}
