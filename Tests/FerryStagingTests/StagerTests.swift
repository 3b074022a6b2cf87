import FerryCore
import FerryStaging
import Foundation
import XCTest

/// Accepted files are copied into the private spool, exactly, before the share is acknowledged.
final class StagerTests: XCTestCase {
    private var workspace: StagingWorkspace!

    override func setUpWithError() throws { workspace = try StagingWorkspace() }
    override func tearDown() { workspace = nil }

    func testStagingCopiesTheBytesExactlyToTheItemsPosition() throws {
        var generator = SystemRandomNumberGenerator()
        // Over one 1 MiB chunk, and not a multiple of it, so the copy loop runs more than once.
        let big = (0..<(3 << 20) + 17).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let first = try workspace.write("first.bin", big)
        let second = try workspace.write("second.txt", text: "second\n")

        let items = try workspace.stage([fileURI(first), fileURI(second)], shareID: "01kshare1")

        XCTAssertEqual(items.count, 2)
        XCTAssertEqual(contents(of: workspace.spool.path(for: "01kshare1", position: 0)), big)
        XCTAssertEqual(contents(of: workspace.spool.path(for: "01kshare1", position: 1)), Array("second\n".utf8))
    }

    func testALargeFileIsCopiedExactlyAndNotIntoThePageCache() throws {
        // Over DirectCopy's threshold, and a tail that is not a whole block; no two blocks alike.
        let big = (0..<(9 << 20) + 17).map { UInt8(truncatingIfNeeded: ($0 &* 2_654_435_761) >> 11) }
        let original = try workspace.write("video.bin", big)

        _ = try workspace.stage([fileURI(original)], shareID: "01kshare1")

        let staged = workspace.spool.path(for: "01kshare1", position: 0)
        // Where the file system takes O_DIRECT (not tmpfs), only the tail went through the cache
        // (looked at before the file is read back, which caches it).
        if supportsDirectIO(workspace.path) {
            try XCTAssertLessThanOrEqual(XCTUnwrap(cachedPages(of: staged)), 2)
        }
        XCTAssertEqual(contents(of: staged), big)
    }

    func testStagedItemsDescribeTheOriginal() throws {
        let original = try workspace.write("notes.txt", text: "hello, world\n")

        let items = try workspace.stage([fileURI(original)], shareID: "01kshare1")

        XCTAssertEqual(
            items,
            [
                ShareItem(
                    kind: .file, name: "notes.txt", contentType: "text/plain", size: 13,
                    uri: fileURI(original))
            ])
    }

    func testTheNameIsTheDecodedFileNameStoredExactly() throws {
        let original = try workspace.write("a b\n\u{202E}gnp.txt", text: "x")

        let items = try workspace.stage([fileURI(original)], shareID: "01kshare1")

        XCTAssertEqual(items.first?.name, "a b\n\u{202E}gnp.txt")
    }

    func testStagedFilesAreOnlyForTheUser() throws {
        let original = try workspace.write("notes.txt", text: "private")

        _ = try workspace.stage([fileURI(original)], shareID: "01kshare1")

        XCTAssertEqual(permissions(of: workspace.spool.root), 0o700)
        XCTAssertEqual(permissions(of: workspace.spool.directory(for: "01kshare1")), 0o700)
        XCTAssertEqual(permissions(of: workspace.spool.path(for: "01kshare1", position: 0)), 0o600)
    }

    func testDeletingOrChangingTheOriginalAfterwardsLeavesTheCopyIntact() throws {
        let kept = try workspace.write("kept.txt", text: "the words as shared")
        let deleted = try workspace.write("deleted.png", onePixelPNG)

        _ = try workspace.stage([fileURI(kept), fileURI(deleted)], shareID: "01kshare1")
        try Data("changed in place!!!".utf8).write(to: URL(fileURLWithPath: kept))
        try FileManager.default.removeItem(atPath: deleted)

        XCTAssertEqual(
            contents(of: workspace.spool.path(for: "01kshare1", position: 0)), Array("the words as shared".utf8))
        XCTAssertEqual(contents(of: workspace.spool.path(for: "01kshare1", position: 1)), onePixelPNG)
    }

    func testContentDecidesTheTypeWhenTheNameLies() throws {
        let original = try workspace.write("picture.txt", onePixelPNG)

        let items = try workspace.stage([fileURI(original)], shareID: "01kshare1")

        XCTAssertEqual(items.first?.contentType, "image/png")
    }

    func testATextFileIsPlainText() throws {
        // Not "readme": shared-mime-info knows README files by name (text/x-readme).
        let original = try workspace.write("notes", text: "Just some words.\nAnd another line.\n")

        let items = try workspace.stage([fileURI(original)], shareID: "01kshare1")

        XCTAssertEqual(items.first?.contentType, "text/plain")
    }

    func testALocalhostFileURIIsALocalFile() throws {
        let original = try workspace.write("notes.txt", text: "x")

        let items = try workspace.stage(["file://localhost" + original], shareID: "01kshare1")

        XCTAssertEqual(items.first?.size, 1)
    }

    func testAFileExactlyAtTheSizeLimitIsAccepted() throws {
        let original = try workspace.write("ten.bin", Array(repeating: 7, count: 10))

        let items = try workspace.stage([fileURI(original)], shareID: "01kshare1", limits: Limits(maxFileSize: 10))

        XCTAssertEqual(items.first?.size, 10)
    }

    func testTextAndLinkItemsNeedNoSpoolDirectory() throws {
        let text = try SharePlan(request: ShareRequest(text: "Hello", source: .share), limits: Limits())
        let link = try SharePlan(request: ShareRequest(text: "https://example.org/", source: .share), limits: Limits())

        XCTAssertEqual(try workspace.stager().stage(text, shareID: "01ktext"), [.text("Hello")])
        XCTAssertEqual(try workspace.stager().stage(link, shareID: "01klink"), [.link("https://example.org/")])
        XCTAssertFalse(exists(workspace.spool.directory(for: "01ktext")))
        XCTAssertFalse(exists(workspace.spool.directory(for: "01klink")))
        XCTAssertEqual(workspace.spool.shareIDs(), [])
    }
}

/// Whether files in `directory` can be opened for O_DIRECT writing.
func supportsDirectIO(_ directory: String) -> Bool {
    let probe = directory + "/direct-probe"
    let fd = open(probe, O_WRONLY | O_CREAT | DirectIO.flag, 0o600)
    defer { unlink(probe) }
    guard DirectIO.flag != 0, fd >= 0 else { return false }
    close(fd)
    return true
}

/// Whether files in `directory` can be cloned (btrfs, XFS: a copy there moves no bytes).
func clones(_ directory: String) -> Bool {
    let source = open(directory + "/clone-probe-a", O_RDWR | O_CREAT, 0o600)
    let target = open(directory + "/clone-probe-b", O_RDWR | O_CREAT, 0o600)
    defer {
        close(source)
        close(target)
        unlink(directory + "/clone-probe-a")
        unlink(directory + "/clone-probe-b")
    }
    guard source >= 0, target >= 0, write(source, "x", 1) == 1 else { return false }
    return ioctl(target, 0x4004_9409 /* FICLONE */, source) == 0
}

/// How many of the file's pages are in the page cache (mincore), without reading any.
private func cachedPages(of path: String) -> Int? {
    let fd = open(path, O_RDONLY)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var info = stat()
    guard fstat(fd, &info) == 0, info.st_size > 0 else { return nil }
    let length = Int(info.st_size)
    guard let map = mmap(nil, length, PROT_READ, MAP_SHARED, fd, 0), map != MAP_FAILED else { return nil }
    defer { munmap(map, length) }
    let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
    var vector = [UInt8](repeating: 0, count: (length + pageSize - 1) / pageSize)
    guard mincore(map, length, &vector) == 0 else { return nil }
    return vector.filter { $0 & 1 != 0 }.count
}
