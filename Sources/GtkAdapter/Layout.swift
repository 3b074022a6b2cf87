import CGtk

/// A row or column of widgets (GtkBox).
public final class Box: Widget {
    public enum Orientation { case horizontal, vertical }
    private var children: [Widget] = []

    public init(_ orientation: Orientation, spacing: Int32 = 0, _ children: [Widget] = []) {
        super.init(
            gtk_box_new(
                orientation == .horizontal ? GTK_ORIENTATION_HORIZONTAL : GTK_ORIENTATION_VERTICAL,
                spacing))
        children.forEach(append)
    }

    public func append(_ child: Widget) {
        children.append(child)
        gtk_box_append(cast(raw), child.raw)
    }

    /// Puts `child` first.
    public func prepend(_ child: Widget) {
        children.insert(child, at: 0)
        gtk_box_prepend(cast(raw), child.raw)
    }

    public func remove(_ child: Widget) {
        children.removeAll { $0 === child }
        gtk_box_remove(cast(raw), child.raw)
    }

    public func removeAll() { children.forEach(remove) }
}

/// A scrollable viewport around one child.
public final class ScrolledWindow: Widget {
    private var child: Widget?

    public init(_ child: Widget? = nil, horizontalScrolling: Bool = false) {
        super.init(gtk_scrolled_window_new())
        gtk_scrolled_window_set_policy(
            cast(raw), horizontalScrolling ? GTK_POLICY_AUTOMATIC : GTK_POLICY_NEVER,
            GTK_POLICY_AUTOMATIC)
        if let child { setChild(child) }
    }

    public func setChild(_ child: Widget) {
        self.child = child
        gtk_scrolled_window_set_child(cast(raw), child.raw)
    }

    /// Grows with its content up to `maxHeight`, then scrolls (a message field that grows).
    public func growWithContent(minHeight: Int32, maxHeight: Int32) {
        gtk_scrolled_window_set_propagate_natural_height(cast(raw), 1)
        gtk_scrolled_window_set_min_content_height(cast(raw), minHeight)
        gtk_scrolled_window_set_max_content_height(cast(raw), maxHeight)
    }
}

/// Pages shown one at a time, with a slide between them (GtkStack).
public final class Stack: Widget {
    private var pages: [String: Widget] = [:]

    public init() {
        super.init(gtk_stack_new())
        gtk_stack_set_transition_type(cast(raw), GTK_STACK_TRANSITION_TYPE_SLIDE_LEFT_RIGHT)
        gtk_stack_set_vhomogeneous(cast(raw), 0)
        gtk_stack_set_interpolate_size(cast(raw), 1)
    }

    public func add(_ page: Widget, name: String) {
        pages[name] = page
        gtk_stack_add_named(cast(raw), page.raw, name)
        if let visiblePage, visiblePage != name {
            page.isHiddenFromAccessibility = true
        }
    }

    public func show(_ name: String, animated: Bool = true) {
        // GTK 4.8 leaves the pages that are not shown in the accessibility tree as if visible;
        // a screen reader (and a test) must not find their controls.
        for (pageName, page) in pages { page.isHiddenFromAccessibility = pageName != name }
        gtk_stack_set_visible_child_full(
            cast(raw), name,
            animated
                ? GTK_STACK_TRANSITION_TYPE_SLIDE_LEFT_RIGHT
                : GTK_STACK_TRANSITION_TYPE_NONE)
    }

    public var visiblePage: String? { gtk_stack_get_visible_child_name(cast(raw)).map { String(cString: $0) } }
}

/// Keeps its child at a readable width in a wide window, as GNOME apps do (AdwClamp).
public final class Clamp: Widget {
    private let child: Widget

    public init(_ child: Widget, maximumWidth: Int32 = 560) {
        self.child = child
        super.init(adw_clamp_new())
        adw_clamp_set_maximum_size(cast(raw), maximumWidth)
        adw_clamp_set_child(cast(raw), child.raw)
    }
}
