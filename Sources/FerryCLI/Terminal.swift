#if canImport(Glibc)
import Glibc
#endif

/// Where the command line writes: results on standard output, everything for a person on standard error.
enum Terminal {
    static func output(_ text: String) {
        print(text)
    }

    /// A line on standard output now, not when stdio's buffer fills: for a stream of lines a
    /// script reads while the command runs (`ferry verify --emoji --json`).
    static func outputNow(_ text: String) {
        writeAll(1, text + "\n")
    }

    static func note(_ text: String) {
        standardError(text + "\n")
    }

    static func error(_ text: String) {
        standardError("ferry: " + text + "\n")
    }

    /// Writes to file descriptor 2 directly (C's `stderr` is a global Swift 6 cannot prove safe).
    static func standardError(_ text: String) {
        writeAll(2, text)
    }

    private static func writeAll(_ descriptor: Int32, _ text: String) {
        var text = text
        text.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 { if errno == EINTR { continue }; return }
                offset += written
            }
        }
    }

    static var standardErrorIsTerminal: Bool { isatty(2) != 0 }
}
