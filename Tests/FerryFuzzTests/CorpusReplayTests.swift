import FerryFuzzTargets
import Foundation
import XCTest

/// The fuzz corpus, replayed through every parser at every test run: the seeds, what fuzzing kept
/// as new coverage, and each input that once crashed a parser (`crash-*`, kept with its fix).
final class CorpusReplayTests: XCTestCase {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("fuzz/corpus")

    func testEveryTargetHasSeedsAndSurvivesItsWholeCorpus() throws {
        for target in FuzzTarget.allCases {
            let folder = Self.corpus.appendingPathComponent(target.rawValue)
            let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
            XCTAssertFalse(files.isEmpty, "no seeds for \(target.rawValue)")
            for name in files {
                let bytes = try [UInt8](Data(contentsOf: folder.appendingPathComponent(name)))
                target.run(bytes)
            }
        }
    }
}
