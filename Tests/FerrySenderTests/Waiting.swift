import XCTest

/// Waits for what the sender does in the background: polls `condition` every 2 ms for up to
/// `seconds`, and when it never held fails the test at the caller's line with `message` and throws.
func waitUntil(
    seconds: Double = 5, _ message: @autoclosure () -> String = "the condition never held",
    file: StaticString = #filePath, line: UInt = #line, _ condition: () -> Bool
) async throws {
    let polls = Int(seconds * 500)
    for _ in 0..<polls {
        if condition() { return }
        try await Task.sleep(nanoseconds: 2_000_000)
    }
    XCTFail("\(message()) (waited \(seconds) s)", file: file, line: line)
    throw CancellationError()
}
