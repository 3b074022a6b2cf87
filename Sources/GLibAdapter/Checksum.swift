import CGLib

/// Digests of text for naming things (files per account), by GLib: never for anything secret.
public enum Checksum {
    /// The SHA-256 of `text`'s UTF-8 bytes, in lower-case hex.
    public static func sha256(_ text: String) -> String {
        guard let digest = g_compute_checksum_for_string(G_CHECKSUM_SHA256, text, -1) else { return "" }
        defer { g_free(digest) }
        return String(cString: digest)
    }
}
