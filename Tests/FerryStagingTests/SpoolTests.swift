import FerryCore
import FerryStaging
import Foundation
import XCTest

/// The spool's layout and housekeeping: one private directory per share, removable whole.
final class SpoolTests: XCTestCase {
    private var workspace: StagingWorkspace!

    override func setUpWithError() throws { workspace = try StagingWorkspace() }
    override func tearDown() { workspace = nil }

    func testPathsFollowTheContractLayout() {
        let spool = workspace.spool

        XCTAssertEqual(spool.directory(for: "01kabc"), spool.root + "/01kabc")
        XCTAssertEqual(spool.path(for: "01kabc", position: 0), spool.root + "/01kabc/0")
        XCTAssertEqual(spool.path(for: "01kabc", position: 12), spool.root + "/01kabc/12")
    }

    func testCreatingTheSpoolMakesItsParentsAndTightensAnExistingDirectory() throws {
        let root = workspace.path + "/loose/spool"
        try FileManager.default.createDirectory(
            atPath: root, withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o755])

        _ = try Spool(root: root)

        XCTAssertEqual(permissions(of: root), 0o700)
    }

    func testShareIDsListEveryStagedShare() throws {
        let file = try workspace.write("a.txt", text: "a")
        _ = try workspace.stage([fileURI(file)], shareID: "01kfirst")
        _ = try workspace.stage([fileURI(file), fileURI(file)], shareID: "01ksecond")

        XCTAssertEqual(Set(workspace.spool.shareIDs()), ["01kfirst", "01ksecond"])
    }

    func testRemovingAShareDeletesItsDirectoryAndOnlyThat() throws {
        let file = try workspace.write("a.txt", text: "a")
        _ = try workspace.stage([fileURI(file), fileURI(file)], shareID: "01kgone")
        _ = try workspace.stage([fileURI(file)], shareID: "01kkept")

        workspace.spool.remove(shareID: "01kgone")

        XCTAssertFalse(exists(workspace.spool.directory(for: "01kgone")))
        XCTAssertEqual(workspace.spool.shareIDs(), ["01kkept"])
        XCTAssertEqual(contents(of: workspace.spool.path(for: "01kkept", position: 0)), Array("a".utf8))
        XCTAssertEqual(contents(of: file), Array("a".utf8), "the original is untouched")
    }

    func testRemovingAShareWhoseFolderIsALinkRemovesTheLinkAndKeepsWhatItPointsAt() throws {
        let outside = workspace.path + "/precious"
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        let kept = try workspace.write("precious/thesis.odt", text: "four years")
        XCTAssertEqual(symlink(outside, workspace.spool.directory(for: "01klinked")), 0)

        workspace.spool.remove(shareID: "01klinked")

        XCTAssertFalse(exists(workspace.spool.directory(for: "01klinked")), "the link itself goes")
        XCTAssertEqual(contents(of: kept), Array("four years".utf8))
    }

    func testRemovingAShareRemovesALinkInsideItAndKeepsItsTarget() throws {
        let file = try workspace.write("a.txt", text: "a")
        _ = try workspace.stage([fileURI(file)], shareID: "01kholdslink")
        let target = try workspace.write("target.txt", text: "not Ferry's")
        XCTAssertEqual(symlink(target, workspace.spool.directory(for: "01kholdslink") + "/1"), 0)

        workspace.spool.remove(shareID: "01kholdslink")

        XCTAssertFalse(exists(workspace.spool.directory(for: "01kholdslink")))
        XCTAssertEqual(contents(of: target), Array("not Ferry's".utf8))
    }

    func testAShareIDThatIsNotOneNameRemovesNothing() throws {
        let file = try workspace.write("a.txt", text: "a")
        _ = try workspace.stage([fileURI(file)], shareID: "01kkept")

        for id in ["..", ".", "", "01kkept/..", "../spool"] { workspace.spool.remove(shareID: id) }

        XCTAssertEqual(workspace.spool.shareIDs(), ["01kkept"])
        XCTAssertEqual(contents(of: file), Array("a".utf8))
    }

    func testASpoolThatIsALinkIsRefusedAndWhatItPointsAtKeepsItsMode() throws {
        let outside = workspace.path + "/shared"
        try FileManager.default.createDirectory(
            atPath: outside, withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o755])
        let root = workspace.path + "/linked-spool"
        XCTAssertEqual(symlink(outside, root), 0)

        XCTAssertThrowsError(try Spool(root: root)) { error in
            XCTAssertTrue("\(error)".contains("symbolic link"), "\(error)")
        }
        XCTAssertEqual(permissions(of: outside), 0o755)
    }

    func testRemovingAShareWithoutFilesIsHarmless() {
        workspace.spool.remove(shareID: "01knothing")

        XCTAssertEqual(workspace.spool.shareIDs(), [])
    }

    func testStagingTheSameShareIDTwiceIsRefusedAndKeepsTheFirstCopies() throws {
        let first = try workspace.write("first.txt", text: "first")
        let second = try workspace.write("second.txt", text: "second")
        _ = try workspace.stage([fileURI(first)], shareID: "01ktwice")

        guard case .stagingFailed = workspace.stagingError([fileURI(second)], shareID: "01ktwice") else {
            return XCTFail("expected stagingFailed")
        }
        XCTAssertEqual(contents(of: workspace.spool.path(for: "01ktwice", position: 0)), Array("first".utf8))
    }
}
