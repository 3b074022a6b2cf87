// ferry-thumbnail PICTURE THUMBNAIL
//
// Reads the picture at PICTURE and prints what its event needs as one line of JSON (FerryCore's
// PictureFacts): the size it is shown at, a blurhash, and, when the picture is too large to be its
// own preview, the thumbnail it wrote to THUMBNAIL (JPEG, or PNG for a picture with transparency).
// Exits 1 with a sentence on stderr when the picture cannot be read, 64 on a wrong command line.
//
// The service runs it for each picture it sends: decoders of files from anywhere (JPEG, PNG, GIF,
// and whatever loaders the system has, HEIC and WebP among them) run here, in a process of their
// own with bounded memory and time, never in the process that holds the tokens and the keys. And
// the service's memory stays as it was: no decoder is ever mapped there.
// Without Foundation: the helper starts in a few milliseconds and adds little to the package.
import FerryCore
import PixbufAdapter
#if canImport(Glibc)
import Glibc
#endif

func facts(of path: String, thumbnailAt output: String) throws(PictureError) -> PictureFacts {
    guard let stored = Picture.storedSize(of: path) else {
        throw PictureError("no image loader of this system reads the file")
    }
    var status = stat()
    let bytes = stat(path, &status) == 0 ? UInt64(status.st_size) : 0
    // Either way round: the orientation is known only after decoding, and a picture stored 800 × 600
    // may be shown 600 × 800.
    let needsThumbnail =
        ThumbnailRule.needsThumbnail(width: stored.width, height: stored.height, bytes: bytes)
        || ThumbnailRule.needsThumbnail(width: stored.height, height: stored.width, bytes: bytes)
    let box = ThumbnailRule.decodingBox(width: stored.width, height: stored.height)
    let large = stored.width > box || stored.height > box
    let decoded = try Picture.decode(path, within: needsThumbnail && large ? box : nil)
    guard let upright = decoded.upright() else { throw PictureError("the picture could not be turned upright") }
    let shown = decoded.isTurnedSideways ? (stored.height, stored.width) : stored
    var facts = PictureFacts(width: shown.0, height: shown.1)
    var preview = upright
    if needsThumbnail {
        let size = ThumbnailRule.thumbnailSize(width: upright.width, height: upright.height)
        guard let thumbnail = upright.scaled(width: size.width, height: size.height) else {
            throw PictureError("the thumbnail could not be scaled")
        }
        facts.thumbnail = try thumbnail.saveThumbnail(to: output)
        preview = thumbnail
    }
    facts.blurhash = preview.blurhash
    return facts
}

let arguments = CommandLine.arguments
guard arguments.count == 3 else {
    HelperRun.fail("ferry-thumbnail", "usage: ferry-thumbnail PICTURE THUMBNAIL", status: 64)
}
HelperRun.limit(addressSpace: 1 << 30)
do throws(PictureError) {
    let result = try facts(of: arguments[1], thumbnailAt: arguments[2])
    print(CanonicalJSON.string(result.json))
} catch {
    HelperRun.fail("ferry-thumbnail", error.message)
}
