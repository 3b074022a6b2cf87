/// Every sentence a person reads goes through `tr`, `trn` or `trc`: GNU gettext's `gettext`,
/// `ngettext` and `pgettext`, under the names `po/Makefile`'s `xgettext` call looks for.
///
/// FerryCore does no I/O and touches no C, so the catalogue itself is a `Translating` that the
/// program installs first thing (GLibAdapter's gettext catalogue); until then, and in unit tests
/// that install none, the English text is the answer.
///
/// Values go into a sentence as named placeholders, `{name}`, never by string interpolation: the
/// translator moves them where the language wants them, and `msgfmt --check` verifies that a
/// translation names the same ones (`python-brace-format`).
public protocol Translating: Sendable {
    /// The translation of `message`, or `message` itself.
    func text(_ message: String) -> String
    /// The form of `singular`/`plural` that `count` needs in the person's language.
    func plural(_ singular: String, _ plural: String, count: UInt64) -> String
    /// The translation of `message` where `context` tells apart two meanings of the same English.
    func text(_ message: String, context: String) -> String
    /// `bytes` as a size for a person in their language ("1.5 MB", "1,5 MB").
    func size(_ bytes: UInt64) -> String
}

/// The catalogue in use: English until the program installs its own.
public enum Translation {
    // Written once, by `install`, on the main thread before any other thread starts; read after.
    nonisolated(unsafe) private static var installed: any Translating = English()

    /// Makes `catalogue` the source of every translated string. Call it once, first thing in
    /// `main`, before any thread is started.
    public static func install(_ catalogue: any Translating) { installed = catalogue }

    /// The catalogue in use.
    public static var current: any Translating { installed }

    /// No translation: the English text, and sizes as `ByteCount` writes them.
    public struct English: Translating {
        /// English.
        public init() {}
        /// `message`.
        public func text(_ message: String) -> String { message }
        /// `singular` for 1, `plural` otherwise.
        public func plural(_ singular: String, _ plural: String, count: UInt64) -> String {
            count == 1 ? singular : plural
        }
        /// `message`.
        public func text(_ message: String, context: String) -> String { message }
        /// `ByteCount.english(bytes)`.
        public func size(_ bytes: UInt64) -> String { ByteCount.english(bytes) }
    }

    /// `template` with each `{name}` replaced by `values[name]`, in one pass: a value that itself
    /// holds braces (a file name) is never read as a placeholder. A `{name}` with no value stays.
    public static func fill(_ template: String, _ values: KeyValuePairs<String, String>) -> String {
        fill(template, values.map { ($0.key, $0.value) })
    }

    static func fill(_ template: String, _ values: [(key: String, value: String)]) -> String {
        guard !values.isEmpty, template.utf8.contains(UInt8(ascii: "{")) else { return template }
        var result = ""
        result.reserveCapacity(template.utf8.count + 32)
        var rest = template[...]
        while let open = rest.firstIndex(of: "{") {
            result += rest[..<open]
            let afterOpen = rest.index(after: open)
            if let close = rest[afterOpen...].firstIndex(of: "}"),
                let value = values.first(where: { $0.key == rest[afterOpen..<close] })?.value
            {
                result += value
                rest = rest[rest.index(after: close)...]
            } else {
                result.append("{")
                rest = rest[afterOpen...]
            }
        }
        return result + rest
    }
}

/// The translation of `message` (gettext), with its `{name}` placeholders filled from `values`.
@inline(__always)
public func tr(_ message: StaticString, _ values: KeyValuePairs<String, String> = [:]) -> String {
    Translation.fill(Translation.current.text(message.description), values)
}

/// The translation of `singular`/`plural` for `count` (ngettext); `{count}` is the number itself,
/// and the other placeholders come from `values`.
public func trn(
    _ singular: StaticString, _ plural: StaticString, _ count: Int,
    _ values: KeyValuePairs<String, String> = [:]
) -> String {
    let form = Translation.current.plural(singular.description, plural.description, count: UInt64(max(0, count)))
    guard form.utf8.contains(UInt8(ascii: "{")) else { return form }
    return Translation.fill(form, values.map { ($0.key, $0.value) } + [("count", String(count))])
}

/// The translation of `message` in `context` (pgettext): for an English word with two meanings.
public func trc(
    _ context: StaticString, _ message: StaticString, _ values: KeyValuePairs<String, String> = [:]
) -> String {
    Translation.fill(Translation.current.text(message.description, context: context.description), values)
}

/// Marks `message` for translation where it is declared (a table of names) and returns it as it
/// is; `tr(dynamic:)` translates it where it is shown (gettext's `N_`).
public func trNoop(_ message: StaticString) -> StaticString { message }

extension Translation {
    /// The translation of a message that was marked with `trNoop` where it was declared.
    public static func text(dynamic message: String, _ values: KeyValuePairs<String, String> = [:]) -> String {
        fill(current.text(message), values)
    }
}
