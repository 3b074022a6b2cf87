import CGLib
import FerryCore
#if canImport(Glibc)
import Glibc
#endif

/// GNU gettext for Ferry's own sentences: the C library's `dgettext`/`dngettext`, GLib's
/// `g_dpgettext2` for contexts and `g_format_size` for sizes, over the `.mo` catalogues installed
/// under `PREFIX/share/locale/LANG/LC_MESSAGES/ferry.mo`.
public struct Gettext: Translating {
    /// The text domain: the catalogues' file name.
    public static let domain = "ferry"

    /// Takes the person's locale from the environment (`setlocale(LC_ALL, "")`, as GTK does),
    /// binds Ferry's domain to the catalogues beside this executable, and makes them the source
    /// of every translated string (`Translation.install`). Call it first thing in `main`.
    ///
    /// Nothing is read here: the C library opens a catalogue at the first lookup, so a process that
    /// never says a sentence never loads one.
    public static func start(localeDirectory: String? = nil) {
        setlocale(LC_ALL, "")
        if let directory = localeDirectory ?? installedLocaleDirectory() {
            bindtextdomain(domain, directory)
        }
        bind_textdomain_codeset(domain, "UTF-8")
        Translation.install(Gettext())
    }

    /// `PREFIX/share/locale` for an executable installed as `PREFIX/bin/ferry` or
    /// `PREFIX/libexec/ferry/ferry-ui`; nil elsewhere (a build tree), where the C library's own
    /// directory is searched.
    static func installedLocaleDirectory() -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        let path = String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var directory = path[..<(path.lastIndex(of: "/") ?? path.startIndex)]
        if directory.hasSuffix("/libexec/ferry") {
            directory = directory.dropLast("/libexec/ferry".count)
        } else if directory.hasSuffix("/bin") {
            directory = directory.dropLast("/bin".count)
        } else {
            return nil
        }
        return directory + "/share/locale"
    }

    // gettext returns its argument itself when there is no translation: the C strings are kept
    // alive (withCString) until the answer has been copied out of them.

    /// The translation of `message`.
    public func text(_ message: String) -> String {
        message.withCString { String(cString: dgettext(Self.domain, $0)) }
    }

    /// The plural form `count` needs.
    public func plural(_ singular: String, _ plural: String, count: UInt64) -> String {
        singular.withCString { one in
            plural.withCString { many in String(cString: dngettext(Self.domain, one, many, UInt(count))) }
        }
    }

    /// The translation of `message` in `context`.
    public func text(_ message: String, context: String) -> String {
        context.withCString { context in
            message.withCString { String(cString: g_dpgettext2(Self.domain, context, $0)) }
        }
    }

    /// `g_format_size`: SI units, the locale's decimal separator, GLib's translations of the units.
    public func size(_ bytes: UInt64) -> String {
        guard let formatted = g_format_size(guint64(bytes)) else { return ByteCount.english(bytes) }
        defer { g_free(formatted) }
        return String(cString: formatted)
    }

    /// A moment (microseconds since 1970) in local time, written the way the locale writes a
    /// date and a time (`%x %X`: "11/26/2026 05:22:33 PM", "26.11.2026 17:22:33"), or as ISO 8601
    /// ("2026-11-26 17:22") under the C locale (`ReadableTime`).
    public static func localDateTime(microseconds: Int64) -> String {
        guard let moment = g_date_time_new_from_unix_local(gint64(microseconds / 1_000_000)) else { return "" }
        defer { g_date_time_unref(moment) }
        let pattern = ReadableTime.pattern(timeLocale: timeLocale())
        guard let formatted = g_date_time_format(moment, pattern) else { return "" }
        defer { g_free(formatted) }
        return String(cString: formatted)
    }

    private static func timeLocale() -> String {
        setlocale(LC_TIME, nil).map { String(cString: $0) } ?? "C"
    }
}
