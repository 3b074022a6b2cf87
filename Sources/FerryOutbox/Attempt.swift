import Logging

extension Logger {
    /// Runs a call whose failure the caller can go on without (a share stays in its last committed
    /// state and the next pass takes it up again), and logs the failure with what was being done
    /// instead of dropping it: `try?` lost a failed outbox write without a trace.
    ///
    /// Use it only where going on is right; where a failure would lose a share's state, handle it.
    public func attempt<T>(
        _ what: @autoclosure () -> String, share: String? = nil,
        file: String = #fileID, line: UInt = #line, _ body: () throws -> T
    ) -> T? {
        do { return try body() } catch {
            failed(what(), share: share, error: error, file: file, line: line)
            return nil
        }
    }

    /// `attempt` for a call that answers nil on its own (a share that is not there, a state that did
    /// not match): nil either way, and only a failure logged.
    public func attempt<T>(
        _ what: @autoclosure () -> String, share: String? = nil,
        file: String = #fileID, line: UInt = #line, _ body: () throws -> T?
    ) -> T? {
        do { return try body() } catch {
            failed(what(), share: share, error: error, file: file, line: line)
            return nil
        }
    }

    private func failed(_ what: String, share: String?, error: any Error, file: String, line: UInt) {
        var metadata: Logger.Metadata = ["error": "\(error)"]
        if let share { metadata["share"] = "\(share)" }
        self.error("\(what) failed", metadata: metadata, file: file, line: line)
    }
}
