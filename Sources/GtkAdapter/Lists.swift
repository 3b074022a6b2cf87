import CGtk

/// A vertical list of rows, keyboard navigable with the arrow keys (GtkListBox), drawn as a
/// boxed list the way GNOME settings lists look.
public final class ListBox: Widget {
    public private(set) var rows: [Row] = []

    public init(boxed: Bool = true) {
        super.init(gtk_list_box_new())
        gtk_list_box_set_selection_mode(cast(raw), GTK_SELECTION_NONE)
        if boxed { addStyle("boxed-list") }
    }

    public func append(_ row: Row) {
        rows.append(row)
        gtk_list_box_append(cast(raw), row.raw)
    }

    public func removeAll() {
        for row in rows { gtk_list_box_remove(cast(raw), row.raw) }
        rows.removeAll()
    }

    /// Shown when the list is empty ("No rooms match").
    public func setPlaceholder(_ widget: Widget) {
        gtk_list_box_set_placeholder(cast(raw), widget.raw)
        placeholder = widget
    }
    private var placeholder: Widget?
}

/// A list row with a title, a subtitle, and widgets before and after them (AdwActionRow).
///
/// When `activates` is set, Enter/Space or a click anywhere on the row activates that widget
/// (a check box in a multi-select list).
public final class Row: Widget {
    private var parts: [Widget] = []

    public init(title: String, subtitle: String? = nil) {
        super.init(adw_action_row_new())
        self.title = title
        if let subtitle { self.subtitle = subtitle }
        // Titles come from rooms and file names: never markup.
        adw_preferences_row_set_use_markup(cast(raw), 0)
        accessibleName = title
    }

    public var title: String {
        get { String(cString: adw_preferences_row_get_title(cast(raw))) }
        set { adw_preferences_row_set_title(cast(raw), newValue) }
    }

    public var subtitle: String {
        get { adw_action_row_get_subtitle(cast(raw)).map { String(cString: $0) } ?? "" }
        set { adw_action_row_set_subtitle(cast(raw), newValue) }
    }

    public func addPrefix(_ widget: Widget) {
        parts.append(widget)
        adw_action_row_add_prefix(cast(raw), widget.raw)
    }

    public func addSuffix(_ widget: Widget) {
        parts.append(widget)
        adw_action_row_add_suffix(cast(raw), widget.raw)
    }

    public func activates(_ widget: Widget) {
        parts.append(widget)
        adw_action_row_set_activatable_widget(cast(raw), widget.raw)
        // libadwaita labels the widget by the row's title; keep the widget's own name alone.
        if !widget.accessibleName.isEmpty { widget.accessibleName = widget.accessibleName }
    }

    /// Enter, Space or a click on an activatable row.
    public func onActivate(_ handler: @escaping () -> Void) { on("activated", handler) }
}
