// GStreamer: for ferry-media alone, the one process that reads videos and sounds.
#include <gst/gst.h>
#include <gst/app/gstappsink.h>
#include <gst/pbutils/pbutils.h>
#include <gst/video/video.h>

// setrlimit(2): the helper bounds its own memory and time before it reads a file.
#include <sys/resource.h>

// g_object_set is variadic, which Swift cannot call.
static inline void ferry_gst_set_string(gpointer object, const char *name, const char *value) {
    g_object_set(object, name, value, NULL);
}

// A poster is one frame: libav's decoders (H.264, HEVC: what phones record) decode it on one
// thread, without a frame in flight for each core (30 MB less at 1080p). Set on each decoder as
// uridecodebin adds it, which takes a C callback.
static inline void ferry_gst_one_thread(GstBin *bin, GstBin *sub, GstElement *element, gpointer data) {
    (void)bin; (void)sub; (void)data;
    if (g_object_class_find_property(G_OBJECT_GET_CLASS(element), "max-threads") != NULL)
        g_object_set(element, "max-threads", 1, NULL);
}

static inline void ferry_gst_decode_on_one_thread(GstElement *pipeline) {
    g_signal_connect(pipeline, "deep-element-added", G_CALLBACK(ferry_gst_one_thread), NULL);
}
