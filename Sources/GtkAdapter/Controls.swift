import CGtk

/// Text a person reads (GtkLabel).
public final class Label: Widget {
    public init(_ text: String = "", style: String? = nil, wraps: Bool = true, alignment: Float = 0) {
        super.init(gtk_label_new(nil))
        self.text = text
        gtk_label_set_wrap(cast(raw), wraps ? 1 : 0)
        gtk_label_set_wrap_mode(cast(raw), PANGO_WRAP_WORD_CHAR)
        gtk_label_set_xalign(cast(raw), alignment)
        if let style { addStyle(style) }
    }

    /// Plain text: never parsed as markup, so names from outside cannot inject any.
    public var text: String {
        get { String(cString: gtk_label_get_text(cast(raw))) }
        set { gtk_label_set_text(cast(raw), newValue) }
    }

    public var isSelectable: Bool {
        get { gtk_label_get_selectable(cast(raw)) != 0 }
        set { gtk_label_set_selectable(cast(raw), newValue ? 1 : 0) }
    }

    /// Ends a long single line with "…" instead of wrapping it.
    public func ellipsizeEnd(maxLines: Int32 = 1) {
        gtk_label_set_ellipsize(cast(raw), PANGO_ELLIPSIZE_END)
        gtk_label_set_lines(cast(raw), maxLines)
    }

    /// Labels `widget` for assistive technologies and moves focus to it on its mnemonic.
    public func describes(_ widget: Widget) {
        gtk_label_set_mnemonic_widget(cast(raw), widget.raw)
    }
}

/// A push button with a label, optionally a spinner before it while it works.
public final class Button: Widget {
    /// What assistive technologies hear while a button works: the application sets it in the
    /// person's language (GtkAdapter knows no translations), once, before any window is made.
    nonisolated(unsafe) public static var busyDescription = "Working…"

    private let content: Box
    private let caption: Label
    /// Made the first time the button is busy: a spinner's image is the icon theme's
    /// process-working-symbolic, an SVG, and GTK loads it (and with it librsvg's code and heap,
    /// docs/PERFORMANCE.md) as soon as a spinner is styled, hidden or not.
    private var spinner: Spinner?

    public init(_ title: String, style: String? = nil) {
        content = Box(.horizontal, spacing: 8)
        caption = Label(title, wraps: false)
        content.append(caption)
        content.horizontalAlignment = .center
        super.init(gtk_button_new())
        gtk_button_set_child(cast(raw), content.raw)
        accessibleName = title
        if let style { addStyle(style) }
    }

    /// A button showing only an icon; `title` is its accessible name and tooltip.
    public init(iconName: String, title: String, style: String? = nil) {
        content = Box(.horizontal)
        caption = Label()
        super.init(gtk_button_new_from_icon_name(iconName))
        accessibleName = title
        tooltip = title
        if let style { addStyle(style) }
    }

    public var title: String {
        get { caption.text }
        set { caption.text = newValue; accessibleName = newValue }
    }

    /// While busy the button shows a spinner and ignores clicks.
    public var isBusy: Bool = false {
        didSet {
            if isBusy, spinner == nil {
                let made = Spinner()
                content.prepend(made)
                spinner = made
            }
            spinner?.isVisible = isBusy
            spinner?.isSpinning = isBusy
            gtk_widget_set_can_target(raw, isBusy ? 0 : 1)
            if isBusy { setAccessibleDescription(Button.busyDescription) } else { setAccessibleDescription("") }
        }
    }

    public func onClick(_ handler: @escaping () -> Void) { on("clicked", handler) }
}

/// The indeterminate progress wheel.
public final class Spinner: Widget {
    public init() { super.init(gtk_spinner_new()) }

    public var isSpinning: Bool {
        get { gtk_spinner_get_spinning(cast(raw)) != 0 }
        set { gtk_spinner_set_spinning(cast(raw), newValue ? 1 : 0) }
    }
}

/// A one-line text field: plain, password (hidden, with a peek icon) or search.
public final class TextField: Widget {
    public enum Kind { case plain, password, search }
    public let kind: Kind

    public init(_ kind: Kind = .plain, placeholder: String = "") {
        self.kind = kind
        switch kind {
        case .plain: super.init(gtk_entry_new())
        case .password: super.init(gtk_password_entry_new())
        case .search: super.init(gtk_search_entry_new())
        }
        switch kind {
        case .plain:
            gtk_entry_set_placeholder_text(cast(raw), placeholder)
        case .password:
            gtk_password_entry_set_show_peek_icon(cast(raw), 1)
            setObjectProperty(object, "placeholder-text", placeholder)
            setObjectProperty(object, "activates-default", true)
        case .search:
            setObjectProperty(object, "placeholder-text", placeholder)
        }
        if kind == .plain { gtk_entry_set_activates_default(cast(raw), 1) }
    }

    public var text: String {
        get { String(cString: gtk_editable_get_text(cast(raw))) }
        set { gtk_editable_set_text(cast(raw), newValue) }
    }

    /// Every change of the text; for a search field, once the person pauses typing.
    public func onChange(_ handler: @escaping () -> Void) {
        on(kind == .search ? "search-changed" : "changed", handler)
    }

    /// Enter pressed in the field: this handler, instead of the window's default button. Not both:
    /// GTK clicks a default that Enter activates 250 ms later (GtkButton's ACTIVATE_TIMEOUT), so
    /// the work would be done twice, the second time on a page that may have gone (a sign-in page's
    /// "Enter your password." then took focus from the page that came in after it).
    public func onActivate(_ handler: @escaping () -> Void) {
        switch kind {
        case .plain: gtk_entry_set_activates_default(cast(raw), 0)
        case .password: setObjectProperty(object, "activates-default", false)
        case .search: break // a search entry never activates the default
        }
        on("activate", handler)
    }

    /// Typing anywhere in `window` goes to this search field.
    public func captureKeys(from window: Widget) {
        guard kind == .search else { return }
        gtk_search_entry_set_key_capture_widget(cast(raw), window.raw)
    }

    /// Shows the field as invalid (red), for inline errors.
    public var isInvalid: Bool = false {
        didSet { isInvalid ? addStyle("error") : removeStyle("error") }
    }
}

/// A tick box, with or without a label.
public final class CheckButton: Widget {
    public init(_ title: String? = nil) {
        super.init(gtk_check_button_new_with_label(title))
    }

    public var isChecked: Bool {
        get { gtk_check_button_get_active(cast(raw)) != 0 }
        set { gtk_check_button_set_active(cast(raw), newValue ? 1 : 0) }
    }

    public func onToggle(_ handler: @escaping () -> Void) { on("toggled", handler) }
}

/// Multi-line editable text (GtkTextView).
public final class TextArea: Widget {
    public init() {
        super.init(gtk_text_view_new())
        gtk_text_view_set_wrap_mode(cast(raw), GTK_WRAP_WORD_CHAR)
        gtk_text_view_set_accepts_tab(cast(raw), 0) // Tab moves focus on, as keyboard users expect
        gtk_text_view_set_top_margin(cast(raw), 8)
        gtk_text_view_set_bottom_margin(cast(raw), 8)
        gtk_text_view_set_left_margin(cast(raw), 8)
        gtk_text_view_set_right_margin(cast(raw), 8)
    }

    public var text: String {
        get {
            let buffer = gtk_text_view_get_buffer(cast(raw))
            var start = GtkTextIter(), end = GtkTextIter()
            gtk_text_buffer_get_bounds(buffer, &start, &end)
            guard let chars = gtk_text_buffer_get_text(buffer, &start, &end, 0) else { return "" }
            defer { g_free(chars) }
            return String(cString: chars)
        }
        set {
            // The cursor goes after the text: a prefilled message is continued, not typed over.
            let buffer = gtk_text_view_get_buffer(cast(raw))
            gtk_text_buffer_set_text(buffer, newValue, -1)
            var end = GtkTextIter()
            gtk_text_buffer_get_end_iter(buffer, &end)
            gtk_text_buffer_place_cursor(buffer, &end)
        }
    }

    public func onChange(_ handler: @escaping () -> Void) {
        Signals.connect(UnsafeMutableRawPointer(gtk_text_view_get_buffer(cast(raw))), "changed", handler)
    }
}

// MARK: - GObject properties by name, for the few setters GTK 4.8 lacks on the interface types.

func setObjectProperty(_ object: UnsafeMutableRawPointer, _ name: String, _ value: String) {
    var gvalue = GValue()
    g_value_init(&gvalue, GType(16 << 2)) // G_TYPE_STRING
    g_value_set_string(&gvalue, value)
    g_object_set_property(cast(object), name, &gvalue)
    g_value_unset(&gvalue)
}

func setObjectProperty(_ object: UnsafeMutableRawPointer, _ name: String, _ value: Bool) {
    var gvalue = GValue()
    g_value_init(&gvalue, GType(5 << 2)) // G_TYPE_BOOLEAN
    g_value_set_boolean(&gvalue, value ? 1 : 0)
    g_object_set_property(cast(object), name, &gvalue)
    g_value_unset(&gvalue)
}
