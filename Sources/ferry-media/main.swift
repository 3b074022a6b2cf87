// ferry-media FILE POSTER
//
// Reads the video or sound at FILE and prints what its event needs as one line of JSON (FerryCore's
// MediaFacts): how long it plays and, for a video, the size it is shown at, a poster frame written
// to POSTER (JPEG, within 800 × 600) and the poster's blurhash. A video whose frame cannot be
// decoded still gets its duration and size. Exits 1 with a sentence on stderr when nothing could
// be read, 64 on a wrong command line.
//
// Like ferry-thumbnail, and for the same reasons: demuxers and decoders of files from anywhere run
// here, in a process of its own with bounded memory and time, and GStreamer is never mapped into
// the service. Without Foundation.
import CGStreamer
import FerryCore
import PixbufAdapter

#if canImport(Glibc)
import Glibc
#endif

/// The largest frame a poster is decoded from: 8K UHD and a little more. A header that claims
/// more (20000 × 20000) would need a gigabyte a frame; the file still gets its duration and size.
let largestFrame = 40_000_000

/// The file's first 64 KB.
func head(of path: String) -> [UInt8] {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return [] }
    defer { close(descriptor) }
    var bytes = [UInt8](repeating: 0, count: 65536)
    let count = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
    return count > 0 ? Array(bytes.prefix(count)) : []
}

func facts(of path: String, posterAt output: String) throws(MediaError) -> MediaFacts {
    var error: UnsafeMutablePointer<GError>?
    guard let uri = gst_filename_to_uri(path, &error) else { throw MediaError(consuming: error) }
    defer { g_free(uri) }
    let name = String(cString: uri)
    let discovery = try Discovery.read(name, timeout: 10)
    var facts = MediaFacts(duration: discovery.duration.map { Int(($0 + 500_000) / 1_000_000) })
    // A WebM recorded as a stream says no duration, and GStreamer's guess is then far off.
    if MatroskaHead.declaresDuration(head(of: path)) == false { facts.duration = nil }
    guard let video = discovery.video,
        let shown = VideoShape.shownSize(
            width: video.width, height: video.height, parN: video.parN, parD: video.parD,
            orientation: video.orientation)
    else { return facts }
    var picture = PictureFacts(width: shown.width, height: shown.height)
    facts.picture = picture
    guard discovery.decodable, video.width * video.height <= largestFrame else { return facts }
    let size = ThumbnailRule.thumbnailSize(width: shown.width, height: shown.height)
    do throws(MediaError) {
        let poster = try PosterFrame.grab(name, width: size.width, height: size.height, timeout: 10)
        picture.thumbnail = try? poster.saveThumbnail(to: output)
        picture.blurhash = poster.blurhash
    } catch {
        // The duration and size still go; only the poster is missing.
        HelperRun.say("ferry-media", "no poster frame: \(error.message)")
    }
    facts.picture = picture
    return facts
}

let arguments = CommandLine.arguments
guard arguments.count == 3 else { HelperRun.fail("ferry-media", "usage: ferry-media FILE POSTER", status: 64) }
gst_init(nil, nil)
// More address space than ferry-thumbnail: a decoder's threads each reserve a stack and an
// allocator arena. Set after gst_init: the plugin scanner it may run, which writes the registry
// every GStreamer program of the person's reads, is not bound by it.
HelperRun.limit(addressSpace: 2 << 30)
do throws(MediaError) {
    let result = try facts(of: arguments[1], posterAt: arguments[2])
    print(CanonicalJSON.string(result.json))
} catch {
    HelperRun.fail("ferry-media", error.message)
}
