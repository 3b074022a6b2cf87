import FerryFuzzTargets
#if canImport(Glibc)
import Glibc
#endif

// Built two ways. `make fuzz` builds it with libFuzzer (FERRY_LIBFUZZER), which brings its own
// main and calls LLVMFuzzerTestOneInput with each input it makes; FERRY_FUZZ_TARGET names the
// parser. Built plainly, it replays files: `ferry-fuzz TARGET FILE...`, to look at one input.

#if FERRY_LIBFUZZER
private let target: FuzzTarget = {
    guard let name = getenv("FERRY_FUZZ_TARGET").map({ String(cString: $0) }), let target = FuzzTarget(rawValue: name)
    else {
        let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: ", ")
        complain("ferry-fuzz: set FERRY_FUZZ_TARGET to one of: \(names)\n")
        exit(64)
    }
    return target
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    target.run(size == 0 ? [] : Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}
#else
@main
struct Replay {
    static func main() {
        let arguments = CommandLine.arguments.dropFirst()
        guard let name = arguments.first, let target = FuzzTarget(rawValue: name) else {
            let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: "|")
            complain("usage: ferry-fuzz \(names) FILE...\n")
            exit(64)
        }
        for path in arguments.dropFirst() {
            guard let file = fopen(path, "rb") else {
                complain("ferry-fuzz: cannot open \(path)\n")
                exit(66)
            }
            var bytes: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65536)
            while case let count = fread(&buffer, 1, buffer.count, file), count > 0 { bytes += buffer[..<count] }
            fclose(file)
            target.run(bytes)
            print("\(path): ok")
        }
    }
}
#endif

/// Writes to file descriptor 2 (C's `stderr` is a global Swift 6 cannot prove safe).
private func complain(_ text: String) {
    var text = text
    text.withUTF8 { bytes in _ = write(2, bytes.baseAddress, bytes.count) }
}
