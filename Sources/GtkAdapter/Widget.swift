import CGtk

/// A GTK widget held from Swift: the base of every widget in this module.
///
/// The Swift object keeps a strong reference (the floating one is sunk), so a widget lives while
/// either GTK's tree or Swift holds it. Signal handlers are closures; capture owners weakly.
open class Widget {
    let raw: UnsafeMutablePointer<GtkWidget>

    init(_ raw: UnsafeMutablePointer<GtkWidget>) {
        self.raw = raw
        g_object_ref_sink(UnsafeMutableRawPointer(raw))
    }

    deinit { g_object_unref(UnsafeMutableRawPointer(raw)) }

    var object: UnsafeMutableRawPointer { UnsafeMutableRawPointer(raw) }

    /// The name assistive technologies read (AT-SPI's accessible name); tests find controls by it.
    open var accessibleName: String {
        get { _accessibleName }
        set {
            _accessibleName = newValue
            // GTK joins a "labelled by" widget's text to the name (libadwaita rows are labelled by
            // their title): the name given here is the whole name.
            gtk_accessible_reset_relation(cast(raw), GTK_ACCESSIBLE_RELATION_LABELLED_BY)
            Accessibility.update(raw, property: GTK_ACCESSIBLE_PROPERTY_LABEL, to: newValue)
        }
    }
    private var _accessibleName = ""

    /// A longer description read after the name (AT-SPI's description).
    public func setAccessibleDescription(_ text: String) {
        gtk_accessible_reset_relation(cast(raw), GTK_ACCESSIBLE_RELATION_DESCRIBED_BY)
        Accessibility.update(raw, property: GTK_ACCESSIBLE_PROPERTY_DESCRIPTION, to: text)
    }

    /// Left out of the accessibility tree: decorative icons, hidden pages.
    public var isHiddenFromAccessibility: Bool = false {
        didSet { Accessibility.update(raw, state: GTK_ACCESSIBLE_STATE_HIDDEN, to: isHiddenFromAccessibility) }
    }

    public var isVisible: Bool {
        get { gtk_widget_get_visible(raw) != 0 }
        set { gtk_widget_set_visible(raw, newValue ? 1 : 0) }
    }

    public var isSensitive: Bool {
        get { gtk_widget_get_sensitive(raw) != 0 }
        set { gtk_widget_set_sensitive(raw, newValue ? 1 : 0) }
    }

    public var tooltip: String? {
        get { gtk_widget_get_tooltip_text(raw).map { String(cString: $0) } }
        set { gtk_widget_set_tooltip_text(raw, newValue) }
    }

    public var canFocus: Bool {
        get { gtk_widget_get_focusable(raw) != 0 }
        set { gtk_widget_set_focusable(raw, newValue ? 1 : 0) }
    }

    @discardableResult
    public func grabFocus() -> Bool { gtk_widget_grab_focus(raw) != 0 }

    public var hasFocus: Bool { gtk_widget_has_focus(raw) != 0 }

    /// Puts `text` on the clipboard of the widget's display (what Ctrl+C would).
    public func copyToClipboard(_ text: String) {
        gdk_clipboard_set_text(gtk_widget_get_clipboard(raw), text)
    }

    public func addStyle(_ cssClass: String) { gtk_widget_add_css_class(raw, cssClass) }
    public func removeStyle(_ cssClass: String) { gtk_widget_remove_css_class(raw, cssClass) }

    public func setMargins(top: Int32 = 0, bottom: Int32 = 0, start: Int32 = 0, end: Int32 = 0) {
        gtk_widget_set_margin_top(raw, top)
        gtk_widget_set_margin_bottom(raw, bottom)
        gtk_widget_set_margin_start(raw, start)
        gtk_widget_set_margin_end(raw, end)
    }

    public func setMargins(_ all: Int32) { setMargins(top: all, bottom: all, start: all, end: all) }

    public var expandsHorizontally: Bool {
        get { gtk_widget_get_hexpand(raw) != 0 }
        set { gtk_widget_set_hexpand(raw, newValue ? 1 : 0) }
    }

    public var expandsVertically: Bool {
        get { gtk_widget_get_vexpand(raw) != 0 }
        set { gtk_widget_set_vexpand(raw, newValue ? 1 : 0) }
    }

    public enum Alignment { case fill, start, end, center }

    public var horizontalAlignment: Alignment {
        get { .fill }
        set { gtk_widget_set_halign(raw, newValue.gtk) }
    }

    public var verticalAlignment: Alignment {
        get { .fill }
        set { gtk_widget_set_valign(raw, newValue.gtk) }
    }

    public func setSizeRequest(width: Int32 = -1, height: Int32 = -1) {
        gtk_widget_set_size_request(raw, width, height)
    }

    /// Shown on screen (its window is mapped and it is visible).
    public var isMapped: Bool { gtk_widget_get_mapped(raw) != 0 }

    // MARK: Signals

    /// Connects a signal whose handler takes no arguments besides the instance ("clicked", "changed").
    public func on(_ signal: String, _ handler: @escaping () -> Void) {
        Signals.connect(object, signal, handler)
    }

    /// Connects a signal that passes one pointer argument the caller does not need ("notify::…",
    /// "row-activated").
    public func onWithArgument(_ signal: String, _ handler: @escaping () -> Void) {
        Signals.connectWithArgument(object, signal, handler)
    }
}

extension Widget.Alignment {
    var gtk: GtkAlign {
        switch self {
        case .fill: return GTK_ALIGN_FILL
        case .start: return GTK_ALIGN_START
        case .end: return GTK_ALIGN_END
        case .center: return GTK_ALIGN_CENTER
        }
    }
}

/// GTK's accessibility properties take GValues through the one non-variadic setter.
enum Accessibility {
    static func update(_ widget: UnsafeMutablePointer<GtkWidget>, property: GtkAccessibleProperty, to text: String) {
        var value = GValue()
        g_value_init(&value, GType(16 << 2)) // G_TYPE_STRING: G_TYPE_MAKE_FUNDAMENTAL (16)
        g_value_set_string(&value, text)
        var properties = [property]
        gtk_accessible_update_property_value(cast(widget), 1, &properties, &value)
        g_value_unset(&value)
    }

    static func update(_ widget: UnsafeMutablePointer<GtkWidget>, state: GtkAccessibleState, to flag: Bool) {
        var value = GValue()
        g_value_init(&value, GType(5 << 2)) // G_TYPE_BOOLEAN
        g_value_set_boolean(&value, flag ? 1 : 0)
        var states = [state]
        gtk_accessible_update_state_value(cast(widget), 1, &states, &value)
        g_value_unset(&value)
    }
}
