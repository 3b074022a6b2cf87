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

/// A file behind a non-local URI (sftp:, smb:, …), read through GIO and its GVfs backends.
public final class RemoteFile {
    private let file: OpaquePointer
    public let displayName: String
    public let size: UInt64
    public let isRegular: Bool

    public init(uri: String) throws {
        file = g_file_new_for_uri(uri)
        var error: UnsafeMutablePointer<GError>?
        guard let info = g_file_query_info(file, "standard::display-name,standard::size,standard::type",
                                           G_FILE_QUERY_INFO_NONE, nil, &error) else {
            g_object_unref(UnsafeMutableRawPointer(file))
            throw GLibError(consuming: error!)
        }
        defer { g_object_unref(UnsafeMutableRawPointer(info)) }
        displayName = String(cString: g_file_info_get_display_name(info))
        size = UInt64(max(0, g_file_info_get_size(info)))
        isRegular = g_file_info_get_file_type(info) == G_FILE_TYPE_REGULAR
    }

    deinit { g_object_unref(UnsafeMutableRawPointer(file)) }

    /// Streams the file's bytes to `sink` in chunks, stopping with an error past `limit` bytes.
    public func read(limit: UInt64, into sink: (UnsafeRawBufferPointer) throws -> Void) throws {
        var error: UnsafeMutablePointer<GError>?
        guard let stream = g_file_read(file, nil, &error) else { throw GLibError(consuming: error!) }
        let input = UnsafeMutableRawPointer(stream).assumingMemoryBound(to: GInputStream.self)
        defer {
            g_input_stream_close(input, nil, nil)
            g_object_unref(UnsafeMutableRawPointer(stream))
        }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 8)
        defer { buffer.deallocate() }
        var total: UInt64 = 0
        while true {
            let count = g_input_stream_read(input, buffer.baseAddress, gsize(buffer.count), nil, &error)
            if count < 0 { throw GLibError(consuming: error!) }
            if count == 0 { return }
            total += UInt64(count)
            if total > limit { throw RemoteFileTooLarge() }
            try sink(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
        }
    }
}

/// Raised by `RemoteFile.read` when the file grows past the limit while it is read.
public struct RemoteFileTooLarge: Error {}
