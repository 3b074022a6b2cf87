import CGLib

/// A D-Bus error as a name and a sentence, the shape in which Ferry reports every failure on the bus.
public struct BusError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The D-Bus error name, e.g. `io.github.ferryshare.Ferry.Error.FileNotFound`.
    public let name: String
    public let message: String

    public init(name: String, message: String) {
        self.name = name
        self.message = message
    }

    public var description: String { "\(name): \(message)" }

    /// Takes ownership of a GError and frees it.
    init(consuming error: UnsafeMutablePointer<GError>) {
        defer { g_error_free(error) }
        if let remote = g_dbus_error_get_remote_error(error) {
            name = String(cString: remote)
            g_free(remote)
            g_dbus_error_strip_remote_error(error)
        } else if error.pointee.domain == g_dbus_error_quark() {
            name = "org.freedesktop.DBus.Error.Failed"
        } else {
            name = "org.gtk.GDBus.Error.Local"
        }
        message = String(cString: error.pointee.message)
    }
}

/// A GLib failure that is not a D-Bus error (I/O, parsing), carried as its message and GIO code.
public struct GLibError: Error, Sendable, CustomStringConvertible {
    public let message: String
    /// The `GIOErrorEnum` value when the domain is G_IO_ERROR, else nil.
    public let ioErrorCode: Int32?

    init(message: String, ioErrorCode: Int32?) {
        self.message = message
        self.ioErrorCode = ioErrorCode
    }

    init(consuming error: UnsafeMutablePointer<GError>) {
        defer { g_error_free(error) }
        message = String(cString: error.pointee.message)
        ioErrorCode = error.pointee.domain == g_io_error_quark() ? error.pointee.code : nil
    }

    public var description: String { message }

    public var isNotSupported: Bool { ioErrorCode == Int32(G_IO_ERROR_NOT_SUPPORTED.rawValue) }
    public var isNotFound: Bool { ioErrorCode == Int32(G_IO_ERROR_NOT_FOUND.rawValue) }
}
