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
            picture: SentPicture(facts: facts, thumbnailURI: "mxc://hs/thumb"))

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
            picture: SentPicture(facts: facts, thumbnailURI: nil))
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
            picture: SentPicture(facts: PictureFacts(width: 10, height: 10)))
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
