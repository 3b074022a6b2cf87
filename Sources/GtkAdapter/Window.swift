import CGtk

/// A top-level window of the application: a header bar above the content, Escape closes it, and
/// closing asks the owner first (a share dialog cancels its share).
public final class Window: Widget {
    public let headerBar: HeaderBar
    private let column: Box
    private var content: Widget?

    public init(application: WindowApplication, title: String, width: Int32, height: Int32) {
        headerBar = HeaderBar()
        column = Box(.vertical)
        super.init(adw_application_window_new(application.gtk))
        gtk_window_set_title(cast(raw), title)
        gtk_window_set_default_size(cast(raw), width, height)
        column.append(headerBar)
        adw_application_window_set_content(cast(raw), column.raw)
        accessibleName = title
        closeOnEscape()
    }

    public var title: String {
        get { gtk_window_get_title(cast(raw)).map { String(cString: $0) } ?? "" }
        set { gtk_window_set_title(cast(raw), newValue); accessibleName = newValue }
    }

    /// Everything under the header bar.
    public func setContent(_ widget: Widget) {
        if let content { column.remove(content) }
        widget.expandsVertically = true
        column.append(widget)
        content = widget
    }

    /// A widget between the header bar and the content (an offline banner).
    public func insertBelowHeader(_ widget: Widget) {
        gtk_box_insert_child_after(
            cast(column.raw),
            widget.raw, headerBar.raw)
        banners.append(widget)
    }
    private var banners: [Widget] = []

    /// The button Enter activates when a field that "activates default" has focus.
    public func setDefault(_ button: Widget) { gtk_window_set_default_widget(cast(raw), button.raw) }

    /// Called when a person closes the window (the X, Escape, Alt+F4). Return false to let it close.
    public func onCloseRequest(_ handler: @escaping () -> Bool) {
        Signals.connectReturningBool(object, "close-request", handler)
    }

    /// Called once, when the window's first frame has been drawn.
    public func onFirstFrame(_ handler: @escaping () -> Void) {
        var done = false
        let box = FrameHandler { if !done { done = true; handler() } }
        on("map") { [weak self] in
            guard let self, let surface = gtk_native_get_surface(cast(self.raw)),
                let clock = gdk_surface_get_frame_clock(surface)
            else { return }
            Signals.connect(UnsafeMutableRawPointer(clock), "after-paint") { box.body() }
        }
    }

    /// Shows the window and asks for focus, with the activation token (Wayland) or startup id (X11)
    /// of the launch that asked for it, so that focus-stealing prevention lets it through.
    public func present(activationToken: String?) {
        if let activationToken, !activationToken.isEmpty { gtk_window_set_startup_id(cast(raw), activationToken) }
        gtk_window_present(cast(raw))
    }

    /// Closes the window without asking (after the share was handed to the service).
    public func destroy() { gtk_window_destroy(cast(raw)) }

    /// Asks to close, as the X button does: the close-request handler runs.
    public func close() { gtk_window_close(cast(raw)) }

    private func closeOnEscape() {
        let controller = gtk_shortcut_controller_new()
        let shortcut = gtk_shortcut_new(
            gtk_shortcut_trigger_parse_string("Escape"),
            gtk_named_action_new("window.close"))
        gtk_shortcut_controller_add_shortcut(cast(UnsafeMutableRawPointer(controller!)), shortcut)
        gtk_shortcut_controller_set_scope(cast(UnsafeMutableRawPointer(controller!)), GTK_SHORTCUT_SCOPE_GLOBAL)
        gtk_widget_add_controller(raw, controller)
    }

    private final class FrameHandler {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }
}

/// The title bar with buttons at its start and end.
public final class HeaderBar: Widget {
    private var parts: [Widget] = []

    public init() {
        super.init(adw_header_bar_new())
    }

    public func packStart(_ widget: Widget) {
        parts.append(widget)
        adw_header_bar_pack_start(cast(raw), widget.raw)
    }

    public func packEnd(_ widget: Widget) {
        parts.append(widget)
        adw_header_bar_pack_end(cast(raw), widget.raw)
    }

    /// A title and a subtitle in the middle of the bar.
    public func setTitle(_ title: String, subtitle: String = "") {
        let widget = adw_window_title_new(title, subtitle)!
        adw_header_bar_set_title_widget(cast(raw), widget)
    }
}

/// A strip under the header bar with a sentence (the offline notice). libadwaita 1.2 has no
/// AdwBanner, so this is a styled box that looks like one.
public final class Banner: Widget {
    private let label: Label

    public init(_ text: String) {
        label = Label(text, alignment: 0.5)
        label.expandsHorizontally = true
        super.init(gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 8))
        gtk_box_append(cast(raw), label.raw)
        addStyle("ferry-banner")
        accessibleName = text
    }

    public var text: String {
        get { label.text }
        set { label.text = newValue; accessibleName = newValue }
    }

    /// A button at the banner's end (what to do about it).
    public func addButton(_ button: Button) {
        button.verticalAlignment = .center
        gtk_box_append(cast(raw), button.raw)
    }
}
