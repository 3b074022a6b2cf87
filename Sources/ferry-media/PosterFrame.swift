import CGStreamer
import PixbufAdapter

/// A video's first frame, decoded, turned upright and scaled by GStreamer to `width` × `height`:
/// the poster its event shows before it plays.
enum PosterFrame {
    static func grab(_ uri: String, width: Int, height: Int, timeout seconds: UInt64) throws(MediaError) -> Picture {
        // videoflip applies the image-orientation tag; the caps ask for square pixels at the
        // poster's size, so the decoder's frame is converted and scaled in one pass. A sound
        // stream beside the video stays unlinked and is never decoded.
        let description =
            "uridecodebin name=source ! videoflip video-direction=auto ! videoconvert ! videoscale"
            + " ! video/x-raw,format=RGB,width=\(width),height=\(height),pixel-aspect-ratio=1/1"
            + " ! appsink name=poster sync=false max-buffers=1"
        var error: UnsafeMutablePointer<GError>?
        guard let pipeline = gst_parse_launch(description, &error) else { throw MediaError(consuming: error) }
        if error != nil { g_error_free(error) }
        let bin = UnsafeMutableRawPointer(pipeline).assumingMemoryBound(to: GstBin.self)
        defer {
            gst_element_set_state(pipeline, GST_STATE_NULL)
            gst_object_unref(UnsafeMutableRawPointer(pipeline))
        }
        guard let source = gst_bin_get_by_name(bin, "source"), let sink = gst_bin_get_by_name(bin, "poster") else {
            throw MediaError("the poster frame's pipeline could not be made")
        }
        defer {
            gst_object_unref(UnsafeMutableRawPointer(source))
            gst_object_unref(UnsafeMutableRawPointer(sink))
        }
        ferry_gst_set_string(UnsafeMutableRawPointer(source), "uri", uri)
        ferry_gst_decode_on_one_thread(pipeline)
        gst_element_set_state(pipeline, GST_STATE_PAUSED)
        let appsink = UnsafeMutableRawPointer(sink).assumingMemoryBound(to: GstAppSink.self)
        guard let sample = gst_app_sink_try_pull_preroll(appsink, GstClockTime(seconds) * 1_000_000_000) else {
            throw MediaError("no frame could be decoded")
        }
        defer { gst_mini_object_unref(UnsafeMutableRawPointer(sample).assumingMemoryBound(to: GstMiniObject.self)) }
        guard let caps = gst_sample_get_caps(sample), let layout = gst_video_info_new_from_caps(caps),
            let buffer = gst_sample_get_buffer(sample)
        else { throw MediaError("the frame has no picture") }
        defer { gst_video_info_free(layout) }
        var map = GstMapInfo()
        guard gst_buffer_map(buffer, &map, GST_MAP_READ) != 0 else { throw MediaError("the frame could not be read") }
        defer { gst_buffer_unmap(buffer, &map) }
        let pixels = UnsafeRawBufferPointer(start: map.data, count: Int(map.size))
        guard
            let picture = Picture.copying(
                rgb: pixels, width: Int(layout.pointee.width), height: Int(layout.pointee.height),
                stride: Int(layout.pointee.stride.0))
        else { throw MediaError("the frame has no picture") }
        return picture
    }
}
