/// How a moment is written for a person: as their locale writes a date and a time, or as ISO 8601
/// when no real locale is set.
public enum ReadableTime {
    /// The `strftime` pattern for the time locale named `locale` (what `setlocale(LC_TIME, nil)`
    /// answers). The C and POSIX locales belong to nobody: their `%x` is the US order with a two-digit
    /// year ("11/28/26"), which a reader elsewhere misreads, so they get ISO 8601 to the minute
    /// ("2026-11-28 00:28"). Every other locale writes its own date and time (`%x %X`).
    public static func pattern(timeLocale locale: String) -> String {
        isNobodysLocale(locale) ? "%Y-%m-%d %H:%M" : "%x %X"
    }

    /// "C", "POSIX" and their codeset forms ("C.UTF-8", "C.utf8"), with or without a modifier.
    static func isNobodysLocale(_ locale: String) -> Bool {
        let name = locale.split(separator: "@", maxSplits: 1).first.map(String.init) ?? ""
        let language = name.split(separator: ".", maxSplits: 1).first.map(String.init) ?? ""
        return language.isEmpty || language == "C" || language == "POSIX"
    }
}
