import GRDB

/// Why the outbox could not read or commit: the database's own words and SQLite's result code,
/// never the statement (which may carry a share's text), so it is safe to log and to show. A
/// change whose call threw this did not happen.
///
/// Every public call of the outbox throws this and nothing else: GRDB's errors, the cold
/// connection's and the file's are turned into it once, where the outbox touches the database.
public struct OutboxError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What went wrong, such as "database or disk is full".
    public let reason: String
    /// SQLite's extended result code; nil when the failure came before SQLite (the file).
    public let code: Int32?

    public init(reason: String, code: Int32? = nil) {
        self.reason = reason
        self.code = code
    }

    init(_ error: any Error) {
        switch error {
        case let error as OutboxError: self = error
        case let error as DatabaseError:
            self.init(
                reason: error.message ?? "SQLite error \(error.resultCode.rawValue)",
                code: error.extendedResultCode.rawValue)
        default: self.init(reason: "\(error)")
        }
    }

    public var description: String { reason }
}
