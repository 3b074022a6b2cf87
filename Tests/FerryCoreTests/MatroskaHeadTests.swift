@testable import FerryCore
import XCTest

/// Whether a WebM says how long it is, read from its first bytes as muxers write them.
final class MatroskaHeadTests: XCTestCase {
    /// An EBML element: its id's bytes, its size as an 8-byte vint (as GStreamer writes it), its content.
    func element(_ id: [UInt8], _ content: [UInt8], unknownSize: Bool = false) -> [UInt8] {
        let size: [UInt8] =
            unknownSize
            ? [0x01, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]
            : [0x01] + (0..<7).reversed().map { UInt8(truncatingIfNeeded: content.count >> ($0 * 8)) }
        return id + size + content
    }

    var header: [UInt8] { element([0x1A, 0x45, 0xDF, 0xA3], [0x42, 0x82, 0x84] + Array("webm".utf8)) }
    let timecodeScale: [UInt8] = [0x2A, 0xD7, 0xB1, 0x83, 0x0F, 0x42, 0x40]
    let durationField: [UInt8] = [0x44, 0x89, 0x88, 0x40, 0xA7, 0x93, 0x00, 0x00, 0x00, 0x00, 0x00]

    func file(info: [UInt8], unknownSegment: Bool = false, seekHeadFirst: Bool = false) -> [UInt8] {
        let seekHead = seekHeadFirst ? element([0x11, 0x4D, 0x9B, 0x74], [0xEC, 0x80]) : []
        let cluster = element([0x1F, 0x43, 0xB6, 0x75], [0xE7, 0x81, 0x00])
        return header
            + element(
                [0x18, 0x53, 0x80, 0x67], seekHead + element([0x15, 0x49, 0xA9, 0x66], info) + cluster,
                unknownSize: unknownSegment)
    }

    func testAFileWithADurationSaysSo() {
        XCTAssertEqual(
            MatroskaHead.declaresDuration(file(info: timecodeScale + durationField, seekHeadFirst: true)), true)
    }

    func testAStreamedRecordingHasNone() {
        // As webmmux streamable=true and browsers write it: a Segment of unknown size, no Duration.
        XCTAssertEqual(MatroskaHead.declaresDuration(file(info: timecodeScale, unknownSegment: true)), false)
    }

    func testWhatIsNotMatroskaOrIsCutShortCannotTell() {
        XCTAssertNil(MatroskaHead.declaresDuration(Array("ftypisom".utf8)))
        XCTAssertNil(MatroskaHead.declaresDuration([]))
        let whole = file(info: timecodeScale + durationField)
        // Cut inside the Info, before its Duration (the Cluster's 15 bytes, the Duration's 11 and
        // two of the TimecodeScale): it cannot say there is none.
        XCTAssertNil(MatroskaHead.declaresDuration(Array(whole.prefix(whole.count - 28))))
        // An Info past a Cluster is not looked for.
        let clusterFirst =
            header
            + element(
                [0x18, 0x53, 0x80, 0x67],
                element([0x1F, 0x43, 0xB6, 0x75], [0xE7, 0x81, 0x00])
                    + element([0x15, 0x49, 0xA9, 0x66], durationField))
        XCTAssertNil(MatroskaHead.declaresDuration(clusterFirst))
    }
}
