import CGStreamer
import FerryCore

/// What GStreamer's discoverer reads from a file's headers: how long it plays and its first video
/// stream. The only place in ferry-media, with PosterFrame, that touches GStreamer's pointers.
struct Discovery {
    /// Nanoseconds, nil when the file does not say.
    var duration: UInt64?
    /// The first real video stream (cover art in a sound file is not one).
    var video: Video?
    /// Whether its frames could be decoded here: a poster is tried only then.
    var decodable = true

    struct Video {
        var width: Int
        var height: Int
        var parN: Int
        var parD: Int
        /// The `image-orientation` tag ("rotate-90"…), which phones write for a video held upright.
        var orientation: String?
    }

    /// Reads `uri` within `timeout` seconds.
    static func read(_ uri: String, timeout seconds: UInt64) throws(MediaError) -> Discovery {
        var error: UnsafeMutablePointer<GError>?
        guard let discoverer = gst_discoverer_new(GstClockTime(seconds) * 1_000_000_000, &error) else {
            throw MediaError(consuming: error)
        }
        defer { g_object_unref(UnsafeMutableRawPointer(discoverer)) }
        let info = gst_discoverer_discover_uri(discoverer, uri, &error)
        defer { if let info { g_object_unref(UnsafeMutableRawPointer(info)) } }
        guard let info else { throw MediaError(consuming: error) }
        // A file whose streams were found but not all decoded (a codec without its plugin, a broken
        // frame) still has a duration and a size; only its poster is given up.
        let result = gst_discoverer_info_get_result(info)
        let failure = MediaError(consuming: error)
        var discovery = Discovery()
        switch result {
        case GST_DISCOVERER_OK: break
        case GST_DISCOVERER_MISSING_PLUGINS, GST_DISCOVERER_ERROR:
            let streams = gst_discoverer_info_get_stream_list(info)
            defer { gst_discoverer_stream_info_list_free(streams) }
            guard streams != nil else {
                throw result == GST_DISCOVERER_ERROR
                    ? failure : MediaError("no GStreamer plugin of this system reads the file")
            }
            discovery.decodable = false
        case GST_DISCOVERER_TIMEOUT: throw MediaError("reading the file took too long")
        default: throw failure
        }
        // A file that cannot be sought in (a WebM recorded as a stream, by a browser) does not say
        // how long it is: GStreamer's guess from its first seconds can be far off, and no duration
        // is better than a wrong one.
        let nanoseconds = gst_discoverer_info_get_duration(info)
        if nanoseconds != GstClockTime.max, nanoseconds != 0, gst_discoverer_info_get_seekable(info) != 0 {
            discovery.duration = UInt64(nanoseconds)
        }
        let streams = gst_discoverer_info_get_video_streams(info)
        defer { gst_discoverer_stream_info_list_free(streams) }
        var node = streams
        while let current = node {
            defer { node = current.pointee.next }
            guard let stream = current.pointee.data else { continue }
            let video = OpaquePointer(stream)
            guard gst_discoverer_video_info_is_image(video) == 0 else { continue }
            discovery.video = Video(
                width: Int(gst_discoverer_video_info_get_width(video)),
                height: Int(gst_discoverer_video_info_get_height(video)),
                parN: Int(gst_discoverer_video_info_get_par_num(video)),
                parD: Int(gst_discoverer_video_info_get_par_denom(video)),
                orientation: orientation(of: video))
            break
        }
        return discovery
    }

    private static func orientation(of stream: OpaquePointer) -> String? {
        guard let tags = gst_discoverer_stream_info_get_tags(stream) else { return nil }
        var value: UnsafeMutablePointer<gchar>?
        guard gst_tag_list_get_string(tags, GST_TAG_IMAGE_ORIENTATION, &value) != 0, let value else { return nil }
        defer { g_free(value) }
        return String(cString: value)
    }
}

/// A file GStreamer could not read, in its words.
struct MediaError: Error {
    let message: String

    init(_ message: String) { self.message = message }

    /// GStreamer's sentence, the error freed.
    init(consuming error: UnsafeMutablePointer<GError>?) {
        if let error {
            message = String(cString: error.pointee.message)
            g_error_free(error)
        } else {
            message = "the file could not be read"
        }
    }
}
