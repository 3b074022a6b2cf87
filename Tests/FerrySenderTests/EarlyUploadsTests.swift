import FerryStaging
import NIOConcurrencyHelpers
@testable import FerrySender
import XCTest

/// Early uploads are handed over once, and abandoning a share stops its uploads by failing the
/// copies they read.
final class EarlyUploadsTests: XCTestCase {
    func testAnUploadIsHandedOverOnceWithItsOutcome() async {
        let uploads = EarlyUploads()
        uploads.add(upload(returning: "mxc://ferry.test/abc"), for: .init(shareID: "s1", position: 0))

        let first = uploads.take(shareID: "s1", position: 0, as: "@me:ferry.test")
        let again = uploads.take(shareID: "s1", position: 0, as: "@me:ferry.test")

        let outcome = await first?.task.value
        XCTAssertEqual(outcome?.uri, "mxc://ferry.test/abc")
        XCTAssertEqual(outcome?.encrypted, false)
        XCTAssertNil(again)
    }

    func testAnUploadIsOnItsAccountsServerAndNotHandedToADeliveryAsAnotherAccount() async {
        let uploads = EarlyUploads()
        uploads.add(upload(returning: "mxc://ferry.test/abc"), for: .init(shareID: "s1", position: 0))

        XCTAssertNil(uploads.take(shareID: "s1", position: 0, as: "@work:other.test"))
        let mine = uploads.take(shareID: "s1", position: 0, as: "@me:ferry.test")

        let outcome = await mine?.task.value
        XCTAssertEqual(outcome?.uri, "mxc://ferry.test/abc", "still there for a delivery as its own account")
    }

    func testAbandoningAShareFailsItsCopiesAndLeavesOtherSharesAlone() async {
        let uploads = EarlyUploads()
        let mine = upload(returning: nil), other = upload(returning: nil)
        uploads.add(mine, for: .init(shareID: "s1", position: 0))
        uploads.add(other, for: .init(shareID: "s2", position: 0))

        uploads.abandon(shareID: "s1")

        await XCTAssertThrowsErrorAsync(try await mine.file.available(after: 0))
        XCTAssertNil(uploads.take(shareID: "s1", position: 0, as: "@me:ferry.test"))
        XCTAssertNotNil(uploads.take(shareID: "s2", position: 0, as: "@me:ferry.test"))
        other.file.advance(to: 10)
        let readable = try? await other.file.available(after: 0)
        XCTAssertEqual(readable, 10)
    }

    func testAbandoningEverythingForgetsEveryShare() {
        let uploads = EarlyUploads()
        uploads.add(upload(returning: nil), for: .init(shareID: "s1", position: 0))
        uploads.add(upload(returning: nil), for: .init(shareID: "s2", position: 3))

        uploads.abandon(shareID: nil)

        XCTAssertNil(uploads.take(shareID: "s1", position: 0, as: "@me:ferry.test"))
        XCTAssertNil(uploads.take(shareID: "s2", position: 3, as: "@me:ferry.test"))
    }

    func testAbandoningOneAccountsUploadsLeavesTheOtherAccountsAlone() {
        let uploads = EarlyUploads()
        uploads.add(upload(returning: nil), for: .init(shareID: "s1", position: 0))
        uploads.add(upload(returning: nil, as: "@work:other.test"), for: .init(shareID: "s2", position: 0))

        uploads.abandon(shareID: nil, userID: "@me:ferry.test")

        XCTAssertNil(uploads.take(shareID: "s1", position: 0, as: "@me:ferry.test"))
        XCTAssertNotNil(uploads.take(shareID: "s2", position: 0, as: "@work:other.test"))
    }

    func testProgressReachesAListenerThatCameLateStartingWithWhatWasAlreadySent() {
        let relay = ProgressRelay()
        let heard = NIOLockedValueBox<[UInt64]>([])
        relay.update(100)

        relay.listen { bytes in heard.withLockedValue { $0.append(bytes) } }
        relay.update(250)

        XCTAssertEqual(heard.withLockedValue { $0 }, [100, 250])
    }

    private func upload(returning outcome: String?, as userID: String = "@me:ferry.test") -> EarlyUploads.Upload {
        EarlyUploads.Upload(
            task: Task { outcome.map { EarlyUploads.Uploaded(uri: $0, encrypted: false) } },
            file: GrowingFile(expectedSize: 100), progress: ProgressRelay(), userID: userID)
    }
}

private func XCTAssertThrowsErrorAsync<T>(
    _ expression: @autoclosure () async throws -> T,
    file: StaticString = #filePath, line: UInt = #line
) async {
    do {
        _ = try await expression()
        XCTFail("no error was thrown", file: file, line: line)
    } catch {}
}
