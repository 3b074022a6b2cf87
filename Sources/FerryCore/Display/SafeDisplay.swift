/// Showing untrusted text (file names, messages) to a person without letting it lie.
///
/// File names may hold newlines, terminal escapes or bidi overrides (U+202E makes "gnp.exe" read
/// as "exe.png"). Ferry stores names exactly and escapes them only where a person reads them.
public enum SafeDisplay {
    /// The text with control characters and bidi controls written as escapes (`\n`, `\u{202E}`).
    public static func escaped(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": result += "\\n"
            case "\t": result += "\\t"
            case "\r": result += "\\r"
            case "\\": result += "\\\\"
            default:
                if needsEscape(scalar) {
                    result += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result
    }

    /// The escaped text in quotation marks, for sentences: the language's own marks (“ ” in
    /// English, „ “ in German, « » in French).
    public static func quoted(_ text: String) -> String {
        // TRANSLATORS: quotation marks around a file name, a room or a share id inside a sentence;
        // write your language's own marks around {text}.
        trc("quotation marks", "“{text}”", ["text": escaped(text)])
    }

    static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        if value < 0x20 || (0x7F...0x9F).contains(value) { return true }
        // Bidi embeddings, overrides and isolates, the marks, and the BOM / zero-width no-break space.
        if (0x202A...0x202E).contains(value) || (0x2066...0x2069).contains(value) { return true }
        return value == 0x200E || value == 0x200F || value == 0x061C || value == 0xFEFF
    }
}

/// Sizes in bytes for people: "1.5 MB", "4 GiB" style is avoided in favour of SI, as GNOME does.
public enum ByteCount {
    /// `bytes` for a person in their language (GLib's `g_format_size` once a catalogue is installed).
    public static func format(_ bytes: UInt64) -> String { Translation.current.size(bytes) }

    /// `bytes` for a person, in SI units as GNOME writes them in English: "1 byte", "512 bytes", "1.5 MB".
    public static func english(_ bytes: UInt64) -> String {
        if bytes < 1000 { return bytes == 1 ? "1 byte" : "\(bytes) bytes" }
        let units = ["kB", "MB", "GB", "TB"]
        var value = Double(bytes) / 1000
        var unit = 0
        // Compared after rounding, so 999,999 bytes reads "1 MB", never "1000 kB".
        while (value * 10).rounded() / 10 >= 1000, unit < units.count - 1 { value /= 1000; unit += 1 }
        let rounded = (value * 10).rounded() / 10
        let text = rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
        return "\(text) \(units[unit])"
    }
}
