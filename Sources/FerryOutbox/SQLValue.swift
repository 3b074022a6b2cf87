import GRDB

/// One column's value as both of the outbox's connections see it: bound to an insert or read from
/// a row, in the order of a statement's columns. The cold connection (SQLite's C API) and GRDB run
/// the same SQL text with the same values, so the two paths cannot drift.
enum SQLValue {
    case null
    case integer(Int64)
    case text(String)

    init(_ text: String?) { self = text.map { .text($0) } ?? .null }
    init(_ number: Int64?) { self = number.map { .integer($0) } ?? .null }

    /// From a value GRDB read (the outbox stores no reals or blobs in these columns).
    init(_ value: DatabaseValue) {
        switch value.storage {
        case .int64(let number): self = .integer(number)
        case .string(let text): self = .text(text)
        case .double(let number): self = .integer(Int64(number))
        case .null, .blob: self = .null
        }
    }

    var text: String? { if case .text(let text) = self { text } else { nil } }
    var integer: Int64? { if case .integer(let number) = self { number } else { nil } }

    /// A statement's values as GRDB binds them.
    static func arguments(_ values: [SQLValue]) -> StatementArguments {
        StatementArguments(
            values.map { value -> (any DatabaseValueConvertible)? in
                switch value {
                case .null: nil
                case .integer(let number): number
                case .text(let text): text
                }
            })
    }
}
