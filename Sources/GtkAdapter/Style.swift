import CGtk

/// Ferry's few additions to the Adwaita style, loaded once per display.
public enum Style {
    // GTK runs on the main thread only, and so does this.
    nonisolated(unsafe) private static var loaded = false

    public static func load() {
        guard !loaded, let display = gdk_display_get_default() else { return }
        loaded = true
        let provider = gtk_css_provider_new()
        gtk_css_provider_load_from_data(provider, css, -1)
        gtk_style_context_add_provider_for_display(
            display, cast(UnsafeMutableRawPointer(provider!)),
            UInt32(GTK_STYLE_PROVIDER_PRIORITY_APPLICATION))
    }

    private static let css = """
        .ferry-banner { background-color: alpha(@accent_bg_color, 0.18); padding: 9px 12px; }
        .thumbnail { border-radius: 8px; }
        .preview-card { padding: 12px; }
        .message-field { border-radius: 6px; }
        """
}
