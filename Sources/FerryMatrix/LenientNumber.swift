import Foundation

/// A JSON number from the server read without ever failing the object around it.
///
/// A `retry_after_ms` of `1e30`, `-5`, `1.5` or `"soon"` must not cost the `errcode` next to it
/// (a strict `Int` field fails the whole decode), nor trap later: the value is kept as a `Double`
/// when it is one (nil otherwise) and turned into something usable by `ServerNumbers`.
package struct LenientNumber: Decodable, Sendable {
    let value: Double?

    package init(from decoder: Decoder) {
        let container = try? decoder.singleValueContainer()
        if let integer = try? container?.decode(Int64.self) {
            value = Double(integer)
        } else if let number = try? container?.decode(Double.self) {
            value = number
        } else {
            value = nil
        }
    }
}
