import CGLib

/// Opening a URI in the program the desktop chose for it (the browser, for https:).
public enum Launcher {
    public static func open(uri: String) throws(GLibError) {
        var error: UnsafeMutablePointer<GError>?
        if g_app_info_launch_default_for_uri(uri, nil, &error) == 0, let error { throw GLibError(consuming: error) }
    }
}
