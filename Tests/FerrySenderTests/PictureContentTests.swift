import FerryCore
import FerryMatrix
import Foundation
import Testing
@testable import FerrySender

/// A picture's event: what the picture reader learnt goes into `info` under the names the spec
/// and Element use; a picture type not every client shows goes as a file when it could not be read.
@Suite struct PictureContentTests {
    func item(_ name: String, _ type: String, size: UInt64 = 5_000_000) -> ShareItem {
        ShareItem(kind: .file, name: name, contentType: type, size: size, uri: "file:///tmp/" + name)
    }

    func json(_ content: MessageContent) throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: JSONEncoder().encode(content)) as? [String: Any] ?? [:]
    }

    @Test func aPhotoNamesItsThumbnailItsShownSizeAndItsBlurhash() throws {
        let facts = PictureFacts(
            width: 4000, height: 6000,
            thumbnail: .init(width: 400, height: 600, mimetype: "image/jpeg", size: 41_000), blurhash: "LEHV6nWB2yk8")
        let content = Sender.fileContent(
            item("IMG_1.jpg", "image/jpeg"), url: "mxc://hs/photo", path: "/nonexistent",
            preview: SentPreview(facts: facts, thumbnailURI: "mxc://hs/thumb"))

        let info = try #require(try json(content)["info"] as? [String: Any])
        #expect(content.msgtype == "m.image")
        #expect(info["w"] as? Int == 4000 && info["h"] as? Int == 6000)
        #expect(info["thumbnail_url"] as? String == "mxc://hs/thumb")
        #expect(info["xyz.amorgan.blurhash"] as? String == "LEHV6nWB2yk8")
        let thumbnail = try #require(info["thumbnail_info"] as? [String: Any])
        #expect(thumbnail["w"] as? Int == 400 && thumbnail["h"] as? Int == 600)
        #expect(thumbnail["mimetype"] as? String == "image/jpeg" && thumbnail["size"] as? Int == 41_000)
    }

    @Test func aThumbnailThatWasNotUploadedIsNotNamed() throws {
        let facts = PictureFacts(
            width: 4000, height: 3000, thumbnail: .init(width: 800, height: 600, mimetype: "image/jpeg", size: 1))
        let content = Sender.fileContent(
            item("a.jpg", "image/jpeg"), url: "mxc://hs/a", path: "/nonexistent",
            preview: SentPreview(facts: facts, thumbnailURI: nil))
        let info = try #require(try json(content)["info"] as? [String: Any])
        #expect(info["thumbnail_url"] == nil && info["thumbnail_info"] == nil)
        #expect(info["w"] as? Int == 4000)
    }

    @Test func aHEICThisSystemCouldNotReadGoesAsAFile() {
        let unread = Sender.fileContent(item("IMG_2.heic", "image/heic"), url: "mxc://hs/b", path: "/nonexistent")
        #expect(unread.msgtype == "m.file")
        #expect(unread.info?.mimetype == "image/heic")

        let read = Sender.fileContent(
            item("IMG_2.heic", "image/heic"), url: "mxc://hs/b", path: "/nonexistent",
            preview: SentPreview(facts: PictureFacts(width: 10, height: 10)))
        #expect(read.msgtype == "m.image")
    }

    @Test func aPNGThisSystemCouldNotReadIsStillAnImage() {
        let content = Sender.fileContent(item("a.png", "image/png"), url: "mxc://hs/c", path: "/nonexistent")
        #expect(content.msgtype == "m.image")
    }
}

/// The picture reader's process gets GdkPixbuf's own variables and nothing that leads to the
/// service's secrets.
@Suite struct ThumbnailHelperEnvironmentTests {
    @Test func onlyGdkPixbufsVariablesReachTheHelper() {
        let service = [
            "DBUS_SESSION_BUS_ADDRESS": "unix:path=/run/user/1000/bus", "HOME": "/home/a",
            "GDK_PIXBUF_MODULE_FILE": "/opt/loaders.cache", "FERRY_LOG": "debug",
        ]
        #expect(ThumbnailHelper.environment(service) == ["GDK_PIXBUF_MODULE_FILE": "/opt/loaders.cache"])
    }
}

/// A video's and a sound's events: `duration` in milliseconds, a video's shown size, poster and
/// blurhash, under the spec's names; without what the reader learnt, the file still goes.
@Suite struct MediaContentTests {
    func item(_ name: String, _ type: String) -> ShareItem {
        ShareItem(kind: .file, name: name, contentType: type, size: 9_000_000, uri: "file:///tmp/" + name)
    }

    func info(_ content: MessageContent) throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: JSONEncoder().encode(content)) as? [String: Any]
        return try #require(object?["info"] as? [String: Any])
    }

    @Test func aVideoNamesItsDurationSizePosterAndBlurhash() throws {
        let facts = PictureFacts(
            width: 1080, height: 1920, thumbnail: .init(width: 338, height: 600, mimetype: "image/jpeg", size: 20_000),
            blurhash: "LEHV6nWB2yk8")
        let content = Sender.fileContent(
            item("VID_1.mp4", "video/mp4"), url: "mxc://hs/v", path: "/nonexistent",
            preview: SentPreview(facts: facts, duration: 12_345, thumbnailURI: "mxc://hs/poster"))
        let info = try info(content)
        #expect(content.msgtype == "m.video")
        #expect(info["duration"] as? Int == 12_345)
        #expect(info["w"] as? Int == 1080 && info["h"] as? Int == 1920)
        #expect(info["thumbnail_url"] as? String == "mxc://hs/poster")
        #expect(info["xyz.amorgan.blurhash"] as? String == "LEHV6nWB2yk8")
        let poster = try #require(info["thumbnail_info"] as? [String: Any])
        #expect(poster["w"] as? Int == 338 && poster["h"] as? Int == 600 && poster["size"] as? Int == 20_000)
    }

    @Test func aSoundNamesItsDurationAndNoPicture() throws {
        let content = Sender.fileContent(
            item("memo.ogg", "audio/ogg"), url: "mxc://hs/a", path: "/nonexistent",
            preview: SentPreview(facts: nil, duration: 2508))
        let info = try info(content)
        #expect(content.msgtype == "m.audio")
        #expect(info["duration"] as? Int == 2508)
        #expect(info["w"] == nil && info["thumbnail_info"] == nil)
    }

    @Test func aVideoItsReaderCouldNotReadGoesWithoutTheExtras() throws {
        let content = Sender.fileContent(item("broken.mp4", "video/mp4"), url: "mxc://hs/b", path: "/nonexistent")
        let info = try info(content)
        #expect(content.msgtype == "m.video")
        #expect(info["duration"] == nil && info["w"] == nil)
        #expect(info["mimetype"] as? String == "video/mp4" && info["size"] as? Int == 9_000_000)
    }

    @Test func aDurationIsNeverPutOnAPictureOrAFile() throws {
        let content = Sender.fileContent(
            item("notes.pdf", "application/pdf"), url: "mxc://hs/c", path: "/nonexistent",
            preview: SentPreview(facts: nil, duration: 1000))
        #expect(try info(content)["duration"] == nil)
    }
}

/// The video reader's process gets GStreamer's and GdkPixbuf's variables and the cache's place, nothing else.
@Suite struct MediaHelperEnvironmentTests {
    @Test func onlyGStreamersVariablesAndTheCacheReachTheHelper() {
        let service = [
            "GST_PLUGIN_PATH": "/opt/gst", "HOME": "/home/ada", "XDG_CACHE_HOME": "/home/ada/.cache",
            "DBUS_SESSION_BUS_ADDRESS": "unix:path=/run/user/1000/bus", "FERRY_ACCESS_TOKEN": "syt_x",
            "GDK_PIXBUF_MODULE_FILE": "/opt/loaders.cache", "LD_PRELOAD": "/tmp/x.so",
        ]
        #expect(
            MediaHelper.environment(service) == [
                "GST_PLUGIN_PATH": "/opt/gst", "HOME": "/home/ada", "XDG_CACHE_HOME": "/home/ada/.cache",
                "GDK_PIXBUF_MODULE_FILE": "/opt/loaders.cache",
            ])
    }
}
