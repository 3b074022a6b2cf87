import FerryCore
import XCTest

/// Where Ferry keeps its files and which limits it applies, from the service's environment.
final class FerryPathsTests: XCTestCase {
    func testXDGVariablesDecideTheDirectories() {
        let paths = FerryPaths(environment: [
            "HOME": "/home/me", "XDG_STATE_HOME": "/state", "XDG_CONFIG_HOME": "/config",
        ])

        XCTAssertEqual(paths.stateDirectory, "/state/ferry")
        XCTAssertEqual(paths.configDirectory, "/config/ferry")
        XCTAssertEqual(paths.database, "/state/ferry/ferry.sqlite3")
        XCTAssertEqual(paths.spool, "/state/ferry/spool")
    }

    func testWithoutXDGVariablesTheDirectoriesAreUnderHome() {
        let paths = FerryPaths(environment: ["HOME": "/home/me"])

        XCTAssertEqual(paths.stateDirectory, "/home/me/.local/state/ferry")
        XCTAssertEqual(paths.configDirectory, "/home/me/.config/ferry")
    }

    func testRelativeAndEmptyXDGValuesAreIgnored() {
        let paths = FerryPaths(environment: ["HOME": "/home/me", "XDG_STATE_HOME": "state", "XDG_CONFIG_HOME": ""])

        XCTAssertEqual(paths.stateDirectory, "/home/me/.local/state/ferry")
        XCTAssertEqual(paths.configDirectory, "/home/me/.config/ferry")
    }
}

final class LimitsTests: XCTestCase {
    func testDefaultsAreTheOnesTheContractDocuments() {
        let limits = Limits.fromEnvironment([:])

        XCTAssertEqual(limits, Limits())
        XCTAssertEqual(limits.maxItems, 1000)
        XCTAssertEqual(limits.maxFileSize, 4_294_967_296)
        XCTAssertEqual(limits.maxTextBytes, 32768)
        XCTAssertEqual(limits.maxSubjectBytes, 1024)
    }

    func testTheEnvironmentOverridesItemCountAndFileSize() {
        let limits = Limits.fromEnvironment(["FERRY_MAX_ITEMS": "5", "FERRY_MAX_FILE_SIZE": "1024"])

        XCTAssertEqual(limits.maxItems, 5)
        XCTAssertEqual(limits.maxFileSize, 1024)
    }

    func testMalformedZeroAndNegativeValuesAreIgnored() {
        for value in ["", "ten", "0", "-3", "1e3", " 5"] {
            let limits = Limits.fromEnvironment(["FERRY_MAX_ITEMS": value, "FERRY_MAX_FILE_SIZE": value])

            XCTAssertEqual(limits, Limits(), "value \(value.debugDescription)")
        }
    }
}
