import FerryCore
import FerryStaging
import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Files Ferry refuses, each with the error that names it, and never a blocked read.
final class StagingRefusalTests: XCTestCase {
    private var workspace: StagingWorkspace!

    override func setUpWithError() throws { workspace = try StagingWorkspace() }
    override func tearDown() { workspace = nil }

    func testAShareThatWouldEatIntoTheDiskReserveIsRefusedBeforeAnyCopy() throws {
        let file = try workspace.write("big.txt", text: String(repeating: "x", count: 4096))
        var limits = Limits()
        limits.diskReserve = .max - 100 // more than any disk has free

        guard
            case .notEnoughSpace(let needed, _, let available)? = workspace.stagingError(
                [fileURI(file)], limits: limits)
        else {
            return XCTFail("expected NotEnoughSpace")
        }
        XCTAssertEqual(needed, 4096)
        XCTAssertGreaterThan(available, 0)
        XCTAssertFalse(
            FileManager.default.fileExists(atPath: workspace.spool.directory(for: "01kstagingerrorxxxxxxxxxxx")))
        // With the reserve the disk can give, the same file is staged.
        XCTAssertNil(workspace.stagingError([fileURI(file)], shareID: "01kstagingerrorxxxxxxxxxx2"))
    }

    func testAMissingFileIsFileNotFound() {
        let missing = workspace.path + "/missing.png"

        XCTAssertEqual(workspace.stagingError([fileURI(missing)]), .fileNotFound(missing))
    }

    func testAFileUnderSomethingThatIsNotADirectoryIsFileNotFound() throws {
        let file = try workspace.write("plain.txt", text: "x")

        XCTAssertEqual(workspace.stagingError([fileURI(file + "/inside")]), .fileNotFound(file + "/inside"))
    }

    func testADirectoryIsIsDirectory() throws {
        let folder = workspace.path + "/Pictures"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)

        // Foundation writes a folder's URI with a trailing slash; the error names the path as given.
        XCTAssertEqual(workspace.stagingError([fileURI(folder)]), .isDirectory(folder + "/"))
    }

    func testAFIFOIsRefusedAtOnceWithoutWaitingForAWriter() throws {
        let fifo = workspace.path + "/pipe"
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        let uri = fileURI(fifo)
        let finished = expectation(description: "staging a FIFO returns")
        let result = Locked<ShareError?>(nil)

        // On a thread of its own: if staging opened the FIFO for reading it would wait for a writer forever.
        Thread.detachNewThread { [workspace] in
            result.value = workspace?.stagingError([uri])
            finished.fulfill()
        }

        wait(for: [finished], timeout: 5)
        XCTAssertEqual(result.value, .notRegularFile(fifo, kind: .fifo))
    }

    func testACharacterDeviceIsNotRegularFile() {
        guard case .notRegularFile(let path, _) = workspace.stagingError(["file:///dev/zero"]) else {
            return XCTFail("expected notRegularFile for /dev/zero")
        }
        XCTAssertEqual(path, "/dev/zero")
    }

    func testASymlinkToADeviceIsNotRegularFile() throws {
        let link = workspace.path + "/zero.png"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "/dev/zero")

        guard case .notRegularFile(link, _) = workspace.stagingError([fileURI(link)]) else {
            return XCTFail("expected notRegularFile for a link to /dev/zero")
        }
    }

    func testASymlinkToAFileIsStagedAsThatFile() throws {
        let target = try workspace.write("target.txt", text: "through a link")
        let link = workspace.path + "/link.txt"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)

        let items = try workspace.stage([fileURI(link)], shareID: "01kshare1")

        XCTAssertEqual(items.first?.size, 14)
        XCTAssertEqual(contents(of: workspace.spool.path(for: "01kshare1", position: 0)), Array("through a link".utf8))
    }

    func testASymlinkLoopIsSymlinkLoop() throws {
        let a = workspace.path + "/a", b = workspace.path + "/b"
        try FileManager.default.createSymbolicLink(atPath: a, withDestinationPath: b)
        try FileManager.default.createSymbolicLink(atPath: b, withDestinationPath: a)

        XCTAssertEqual(workspace.stagingError([fileURI(a)]), .symlinkLoop(a))
    }

    func testADanglingSymlinkIsDanglingSymlink() throws {
        let link = workspace.path + "/dangling.png"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: workspace.path + "/gone.png")

        XCTAssertEqual(workspace.stagingError([fileURI(link)]), .danglingSymlink(link))
    }

    func testAnEmptyFileIsEmptyFile() throws {
        let empty = try workspace.write("empty.txt", [])

        XCTAssertEqual(workspace.stagingError([fileURI(empty)]), .emptyFile(empty))
    }

    func testAFileOverTheSizeLimitIsFileTooLarge() throws {
        let big = try workspace.write("eleven.bin", Array(repeating: 1, count: 11))

        XCTAssertEqual(
            workspace.stagingError([fileURI(big)], limits: Limits(maxFileSize: 10)),
            .fileTooLarge(big, size: 11, limit: 10))
    }

    func testAFileURIOnAnotherHostIsRemoteHost() {
        XCTAssertEqual(
            workspace.stagingError(["file://otherhost/x"]), .remoteHost("file://otherhost/x", host: "otherhost"))
    }

    func testAMailtoURIIsAnUnsupportedScheme() {
        XCTAssertEqual(workspace.stagingError(["mailto:x"]), .unsupportedScheme("mailto:x", scheme: "mailto"))
    }

    func testAPathWithoutASchemeIsAnInvalidURI() {
        guard case .invalidURI("/etc/hostname", _) = workspace.stagingError(["/etc/hostname"]) else {
            return XCTFail("expected invalidURI for a bare path")
        }
    }

    func testOneBadFileRefusesTheWholeShareNamingItAndLeavesNoSpoolDirectory() throws {
        let good = try workspace.write("good.txt", text: "good")
        let alsoGood = try workspace.write("also-good.png", onePixelPNG)
        let bad = workspace.path + "/bad\nname.png"

        let error = workspace.stagingError([fileURI(good), fileURI(bad), fileURI(alsoGood)], shareID: "01kbadshare")

        XCTAssertEqual(error, .fileNotFound(bad))
        XCTAssertTrue(error?.message.contains("bad\\nname.png") ?? false, error?.message ?? "")
        XCTAssertFalse(exists(workspace.spool.directory(for: "01kbadshare")))
        XCTAssertFalse(workspace.spool.shareIDs().contains("01kbadshare"))
    }

    func testABadFileAfterGoodOnesIsFoundBeforeAnythingIsCopied() throws {
        let good = try workspace.write("good.txt", text: "good")
        let empty = try workspace.write("empty.txt", [])

        let error = workspace.stagingError([fileURI(good), fileURI(good), fileURI(empty)], shareID: "01kbadshare")

        XCTAssertEqual(error, .emptyFile(empty))
        XCTAssertEqual(workspace.spool.shareIDs(), [])
    }
}

/// A value shared between a test and the thread it starts.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value {
        get { lock.lock(); defer { lock.unlock() }; return stored }
        set { lock.lock(); defer { lock.unlock() }; stored = newValue }
    }
}
