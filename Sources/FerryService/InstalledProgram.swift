#if canImport(Glibc)
import Glibc
#endif

/// Ferry's helper programs, installed next to `ferry`: PREFIX/bin/ferry → PREFIX/libexec/ferry/NAME
/// (the dialog, `ferry-ui`; the picture reader, `ferry-thumbnail`).
enum InstalledProgram {
    /// The helper's path, when it is there and may be run.
    static func path(_ name: String) -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        let exe = String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        // Not split/joined: the standard library's unspecialized `joined` costs a scan of every
        // conformance record on a cold start's path (docs/PERFORMANCE.md).
        let bin = exe.lastIndex(of: "/").map { String(exe[..<$0]) } ?? ""
        let candidate = bin + "/../libexec/ferry/" + name
        return access(candidate, X_OK) == 0 ? candidate : nil
    }
}
