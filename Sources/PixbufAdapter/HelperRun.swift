#if canImport(Glibc)
import Glibc
#endif

/// What the reader helpers (ferry-thumbnail, ferry-media) do alike: bound what a file from
/// anywhere may cost them, and say why they stopped.
public enum HelperRun {
    /// A file that needs more than `addressSpace` bytes, or more than 20 s of CPU, is not read: a
    /// crafted file cannot make a helper take the machine's memory or hold a share up for long.
    /// A crash writes no core (the pixels of someone's picture or video).
    public static func limit(addressSpace: rlim_t) {
        var memory = rlimit(rlim_cur: addressSpace, rlim_max: addressSpace)
        setrlimit(Int32(RLIMIT_AS.rawValue), &memory)
        var time = rlimit(rlim_cur: 20, rlim_max: 20)
        setrlimit(Int32(RLIMIT_CPU.rawValue), &time)
        var core = rlimit(rlim_cur: 0, rlim_max: 0)
        setrlimit(Int32(RLIMIT_CORE.rawValue), &core)
    }

    /// Says `message` on stderr as `program` and exits with `status` (1: the file could not be
    /// read; 64: a wrong command line).
    public static func fail(_ program: String, _ message: String, status: Int32 = 1) -> Never {
        say(program, message)
        exit(status)
    }

    /// Says `message` on stderr as `program`: one line, which the sender logs.
    public static func say(_ program: String, _ message: String) {
        let line = Array("\(program): \(message)\n".utf8)
        _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    }
}
