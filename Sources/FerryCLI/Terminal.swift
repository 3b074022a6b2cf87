#if canImport(Glibc)
import Glibc
#endif

/// Where the command line writes: results on standard output, everything for a person on standard error.
enum Terminal {
    static func output(_ text: String) {
        print(text)
    }

    static func note(_ text: String) {
        fputs(text + "\n", stderr)
    }

    static func error(_ text: String) {
        fputs("ferry: " + text + "\n", stderr)
    }

    static var standardErrorIsTerminal: Bool { isatty(2) != 0 }
}
