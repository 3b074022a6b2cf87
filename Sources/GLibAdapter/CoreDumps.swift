import CGLib

/// What the service holds in memory — the key that seals its encryption records, access tokens,
/// Megolm ratchets — must not reach the disk in a core file when it crashes, nor be read out of
/// it by another program of the same person (ptrace, /proc/PID/mem).
public enum CoreDumps {
    /// Turns core dumps off for this process: a core size limit of 0 (which systemd-coredump and
    /// apport honour too) and not dumpable (which also keeps other processes of the same user from
    /// attaching to it). Returns whether the kernel now says both; the caller logs it.
    ///
    /// /proc/self files readable only by their owner (pagemap) then belong to root: MemoryPolicy
    /// opens what it needs before this is called (`keepFlat`).
    @discardableResult public static func turnOff() -> Bool {
        var none = rlimit(rlim_cur: 0, rlim_max: 0)
        _ = setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &none)
        _ = ferry_set_dumpable(0)
        var now = rlimit()
        return getrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &now) == 0 && now.rlim_cur == 0
            && ferry_get_dumpable() == 0
    }
}
