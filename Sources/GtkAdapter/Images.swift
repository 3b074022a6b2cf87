import CGtk

/// An icon from the icon theme, or the icon of a content type ("image/png" → an image icon).
/// Decorative unless given an accessible name: screen readers skip it.
public final class Icon: Widget {
    public init(name: String, pixelSize: Int32 = 16) {
        super.init(gtk_image_new_from_icon_name(name))
        gtk_image_set_pixel_size(cast(raw), pixelSize)
        isHiddenFromAccessibility = true
    }

    public init(contentType: String, pixelSize: Int32 = 32) {
        let icon = g_content_type_get_icon(contentType)
        super.init(gtk_image_new_from_gicon(icon))
        if let icon { g_object_unref(UnsafeMutableRawPointer(icon)) }
        gtk_image_set_pixel_size(cast(raw), pixelSize)
        isHiddenFromAccessibility = true
    }

    public override var accessibleName: String {
        didSet { isHiddenFromAccessibility = accessibleName.isEmpty }
    }
}

/// A picture scaled down from an image file, decoded at the size shown (never the full image).
public final class Thumbnail: Widget {
    /// Nil when the file cannot be read or decoded; show an icon instead.
    public init?(path: String, size: Int32) {
        var width: Int32 = 0, height: Int32 = 0
        guard gdk_pixbuf_get_file_info(path, &width, &height) != nil, width > 0, height > 0 else { return nil }
        // Never larger than the image itself: a small picture stays sharp.
        var error: UnsafeMutablePointer<GError>?
        guard let pixbuf = gdk_pixbuf_new_from_file_at_scale(path, min(size, width), min(size, height), 1, &error)
        else {
            if let error { g_error_free(error) }
            return nil
        }
        // EXIF orientation: phone photos are stored sideways and rotated on display.
        let oriented = gdk_pixbuf_apply_embedded_orientation(pixbuf) ?? pixbuf
        let texture = gdk_texture_new_for_pixbuf(oriented)
        if oriented != pixbuf { g_object_unref(UnsafeMutableRawPointer(oriented)) }
        g_object_unref(UnsafeMutableRawPointer(pixbuf))
        super.init(gtk_picture_new_for_paintable(cast(UnsafeMutableRawPointer(texture!))))
        if let texture { g_object_unref(UnsafeMutableRawPointer(texture)) }
        gtk_picture_set_can_shrink(cast(raw), 0) // shown at its decoded size, never stretched
        gtk_picture_set_content_fit(cast(raw), GTK_CONTENT_FIT_SCALE_DOWN)
        addStyle("thumbnail")
    }
}

/// A round picture with initials, for rooms and people (AdwAvatar).
public final class Avatar: Widget {
    public init(name: String, size: Int32 = 32) {
        super.init(adw_avatar_new(size, name, 1))
        isHiddenFromAccessibility = true // the row it is in names the room
    }

    /// The name its initials and colour come from.
    public var name: String {
        get { adw_avatar_get_text(cast(raw)).map { String(cString: $0) } ?? "" }
        set { adw_avatar_set_text(cast(raw), newValue) }
    }

    /// Shows the picture in the file at `path` in place of the initials (nil: the initials again).
    /// A file that cannot be read leaves the initials.
    public func showPicture(at path: String?) {
        guard let path, !path.isEmpty else {
            adw_avatar_set_custom_image(cast(raw), nil)
            return
        }
        var error: UnsafeMutablePointer<GError>?
        guard let texture = gdk_texture_new_from_filename(path, &error) else {
            if let error { g_error_free(error) }
            return
        }
        adw_avatar_set_custom_image(cast(raw), cast(UnsafeMutableRawPointer(texture)))
        g_object_unref(UnsafeMutableRawPointer(texture))
    }
}
