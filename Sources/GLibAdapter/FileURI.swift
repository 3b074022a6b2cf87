import CGLib

/// URIs of files, decoded and encoded the way GLib does it (RFC 8089, percent-encoding of bytes).
public enum FileURI {
    /// The local path of a `file:` URI and the host it names, if any (nil for `file:///…`).
    public static func path(of uri: String) -> (path: String, host: String?)? {
        var host: UnsafeMutablePointer<CChar>?
        guard let path = g_filename_from_uri(uri, &host, nil) else { return nil }
        defer { g_free(path); g_free(host) }
        return (String(cString: path), host.map { String(cString: $0) })
    }

    /// A `file://` URI for an absolute path.
    public static func uri(forPath path: String) -> String? {
        guard let uri = g_filename_to_uri(path, nil, nil) else { return nil }
        defer { g_free(uri) }
        return String(cString: uri)
    }

    /// The scheme of a URI, lower-cased, or nil when the text is not a URI.
    public static func scheme(of uri: String) -> String? {
        guard let scheme = g_uri_parse_scheme(uri) else { return nil }
        defer { g_free(scheme) }
        return String(cString: scheme).lowercased()
    }

    /// The URI schemes GIO can read on this machine (file, and whatever GVfs backends add).
    public static var readableSchemes: Set<String> {
        guard let vfs = g_vfs_get_default(), let list = g_vfs_get_supported_uri_schemes(vfs) else { return ["file"] }
        var schemes: Set<String> = []
        var index = 0
        while let scheme = list[index] {
            schemes.insert(String(cString: scheme))
            index += 1
        }
        return schemes
    }
}
