import CGdkPixbuf
import FerryCore
#if canImport(Glibc)
import Glibc
#endif

/// A decoded picture: one GdkPixbuf reference, released with the value's last owner. The only
/// place in the helpers (ferry-thumbnail, ferry-media) that touches GdkPixbuf's pointers.
public final class Picture {
    let pixbuf: OpaquePointer

    private init(taking pixbuf: OpaquePointer) { self.pixbuf = pixbuf }
    deinit { g_object_unref(UnsafeMutableRawPointer(pixbuf)) }

    /// The picture's stored size from its header, without decoding it; nil when no loader of this
    /// system knows the file.
    public static func storedSize(of path: String) -> (width: Int, height: Int)? {
        var (width, height): (Int32, Int32) = (0, 0)
        guard gdk_pixbuf_get_file_info(path, &width, &height) != nil, width > 0, height > 0 else { return nil }
        return (Int(width), Int(height))
    }

    /// Decodes the picture at `path`, within `box` × `box` pixels when given. JPEG's decoder then
    /// works at a reduced scale (a 24-megapixel photo is never decoded whole).
    public static func decode(_ path: String, within box: Int?) throws(PictureError) -> Picture {
        var error: UnsafeMutablePointer<GError>?
        let pixbuf =
            if let box {
                gdk_pixbuf_new_from_file_at_scale(path, Int32(box), Int32(box), 1, &error)
            } else {
                gdk_pixbuf_new_from_file(path, &error)
            }
        guard let pixbuf else { throw PictureError(consuming: error) }
        return Picture(taking: pixbuf)
    }

    /// A copy of RGB pixels, three bytes a pixel, rows `stride` bytes apart (a video frame).
    public static func copying(rgb pixels: UnsafeRawBufferPointer, width: Int, height: Int, stride: Int) -> Picture? {
        guard width > 0, height > 0, stride >= width * 3, pixels.count >= stride * height,
            let base = pixels.baseAddress, let bytes = g_bytes_new(base, gsize(stride * height))
        else { return nil }
        defer { g_bytes_unref(bytes) }
        return gdk_pixbuf_new_from_bytes(bytes, GDK_COLORSPACE_RGB, 0, 8, Int32(width), Int32(height), Int32(stride))
            .map { Picture(taking: $0) }
    }

    public var width: Int { Int(gdk_pixbuf_get_width(pixbuf)) }
    public var height: Int { Int(gdk_pixbuf_get_height(pixbuf)) }
    public var hasAlpha: Bool { gdk_pixbuf_get_has_alpha(pixbuf) != 0 }

    /// Whether every pixel is opaque (a screenshot's alpha channel often is): then nothing is lost
    /// in a JPEG.
    public var isOpaque: Bool {
        guard hasAlpha else { return true }
        return withPixels { pixels, stride, channels in
            for row in 0..<height {
                var at = row * stride + channels - 1
                for _ in 0..<width {
                    if pixels[at] != 255 { return false }
                    at += channels
                }
            }
            return true
        }
    }

    /// Whether the EXIF orientation the loader found turns the picture by a quarter (5 to 8):
    /// then it is shown with width and height swapped.
    public var isTurnedSideways: Bool {
        guard let value = gdk_pixbuf_get_option(pixbuf, "orientation") else { return false }
        return ["5", "6", "7", "8"].contains(String(cString: value))
    }

    /// The picture as it is shown: its EXIF orientation applied.
    public func upright() -> Picture? {
        gdk_pixbuf_apply_embedded_orientation(pixbuf).map { Picture(taking: $0) }
    }

    /// The picture at `width` × `height`, smoothly scaled.
    public func scaled(width: Int, height: Int) -> Picture? {
        if width == self.width && height == self.height { return self }
        return gdk_pixbuf_scale_simple(pixbuf, Int32(width), Int32(height), GDK_INTERP_BILINEAR).map {
            Picture(taking: $0)
        }
    }

    /// The pixels, as Blurhash reads them: rows `stride` bytes apart, `channels` bytes a pixel.
    public func withPixels<T>(_ body: (UnsafeRawBufferPointer, _ stride: Int, _ channels: Int) -> T) -> T {
        let bytes = UnsafeRawBufferPointer(
            start: gdk_pixbuf_read_pixels(pixbuf), count: Int(gdk_pixbuf_get_byte_length(pixbuf)))
        return body(bytes, Int(gdk_pixbuf_get_rowstride(pixbuf)), Int(gdk_pixbuf_get_n_channels(pixbuf)))
    }

    /// Writes the picture to `path` as `type` ("jpeg", "png") with the saver's options.
    public func save(to path: String, type: String, options: [(String, String)]) throws(PictureError) {
        var error: UnsafeMutablePointer<GError>?
        var keys = options.map { strdup($0.0) } + [nil]
        var values = options.map { strdup($0.1) } + [nil]
        defer { (keys + values).forEach { free($0) } }
        let saved = keys.withUnsafeMutableBufferPointer { keyBuffer in
            values.withUnsafeMutableBufferPointer { valueBuffer in
                gdk_pixbuf_savev(pixbuf, path, type, keyBuffer.baseAddress, valueBuffer.baseAddress, &error)
            }
        }
        guard saved != 0 else { throw PictureError(consuming: error) }
    }
}

extension Picture {
    /// Writes the picture as a thumbnail: PNG when some pixel is not opaque (transparency stays),
    /// otherwise a JPEG of the quality Element's clients use (a photo, or a screenshot whose alpha
    /// channel is opaque all over). Returns what `thumbnail_info` says of it.
    public func saveThumbnail(to path: String) throws(PictureError) -> PictureFacts.Thumbnail {
        let (type, mimetype, options) =
            hasAlpha && !isOpaque ? ("png", "image/png", []) : ("jpeg", "image/jpeg", [("quality", "83")])
        try save(to: path, type: type, options: options)
        var status = stat()
        guard stat(path, &status) == 0 else { throw PictureError("the thumbnail was not written") }
        return .init(width: width, height: height, mimetype: mimetype, size: UInt64(status.st_size))
    }

    /// The picture's blurhash, from a copy at most 32 pixels a side: the hash keeps four by three
    /// components, which so few pixels carry as well as a million.
    public var blurhash: String? {
        let scale = min(1, 32 / Double(max(width, height)))
        let (smallWidth, smallHeight) = (
            max(1, Int((Double(width) * scale).rounded())), max(1, Int((Double(height) * scale).rounded()))
        )
        guard let small = scaled(width: smallWidth, height: smallHeight) else { return nil }
        return small.withPixels { pixels, stride, channels in
            Blurhash.encode(pixels: pixels, width: smallWidth, height: smallHeight, stride: stride, channels: channels)
        }
    }
}

/// A picture that could not be read or written, in GdkPixbuf's words.
public struct PictureError: Error {
    public let message: String

    public init(_ message: String) { self.message = message }

    init(consuming error: UnsafeMutablePointer<GError>?) {
        if let error {
            message = String(cString: error.pointee.message)
            g_error_free(error)
        } else {
            message = "the picture could not be read"
        }
    }
}
