import CGStreamer
import PixbufAdapter

/// A video's first frame, decoded, turned upright and scaled by GStreamer to `width` × `height`:
/// the poster its event shows before it plays.
enum PosterFrame {
    static func grab(_ uri: String, width: Int, height: Int, timeout seconds: UInt64) throws(MediaError) -> Picture {
        // videoflip applies the image-orientation tag (after a first conversion: it takes fewer
        // formats than decoders give, 4:2:2 H.264 among them); the caps ask for square pixels at
        // the poster's size.
        let description =
            "uridecodebin name=source ! videoconvert ! videoflip video-direction=auto ! videoconvert ! videoscale"
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
        let source = gst_bin_get_by_name(bin, "source")
        let sink = gst_bin_get_by_name(bin, "poster")
        defer {
            if let source { gst_object_unref(UnsafeMutableRawPointer(source)) }
            if let sink { gst_object_unref(UnsafeMutableRawPointer(sink)) }
        }
        guard let source, let sink else { throw MediaError("the poster frame's pipeline could not be made") }
        ferry_gst_set_string(UnsafeMutableRawPointer(source), "uri", uri)
        ferry_gst_decode_on_one_thread(pipeline)
        // Paused, the pipeline decodes its first frame; a failure (a format no element takes, a
        // broken stream) is said on the bus at once rather than after the whole timeout.
        gst_element_set_state(pipeline, GST_STATE_PAUSED)
        if gst_element_get_state(pipeline, nil, nil, GstClockTime(seconds) * 1_000_000_000) == GST_STATE_CHANGE_FAILURE
        {
            throw failure(of: pipeline)
        }
        let appsink = UnsafeMutableRawPointer(sink).assumingMemoryBound(to: GstAppSink.self)
        guard let sample = gst_app_sink_try_pull_preroll(appsink, 1_000_000_000) else {
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

    /// What the pipeline's bus says went wrong.
    private static func failure(of pipeline: UnsafeMutablePointer<GstElement>) -> MediaError {
        guard let bus = gst_element_get_bus(pipeline) else { return MediaError("no frame could be decoded") }
        defer { gst_object_unref(UnsafeMutableRawPointer(bus)) }
        guard let message = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR) else {
            return MediaError("no frame could be decoded")
        }
        defer { gst_mini_object_unref(UnsafeMutableRawPointer(message).assumingMemoryBound(to: GstMiniObject.self)) }
        var error: UnsafeMutablePointer<GError>?
        gst_message_parse_error(message, &error, nil)
        return MediaError(consuming: error)
    }
}
