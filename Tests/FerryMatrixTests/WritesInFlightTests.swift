import Dispatch
@testable import FerryMatrix
import NIOCore
import NIOPosix
import Synchronization
import XCTest

/// The reader of an upload's next chunk waits for the connection only when too many writes are
/// outstanding: never for an event loop that is busy with the write just handed over.
final class WritesInFlightTests: XCTestCase {
    private var group: MultiThreadedEventLoopGroup!
    private var loop: any EventLoop { group.next() }

    override func setUp() { group = MultiThreadedEventLoopGroup(numberOfThreads: 1) }
    override func tearDown() { try? group.syncShutdownGracefully() }

    func testBelowTheLimitReserveReturnsWhileTheEventLoopIsBusy() async throws {
        let inFlight = WritesInFlight(limit: 2)
        let first = try await write(into: inFlight)
        let second = loop.makePromise(of: Void.self)
        // The loop is busy (as it is while it writes a chunk to the socket) until released, or
        // for two seconds should reserve wait for it after all.
        let release = DispatchSemaphore(value: 0)
        let loopWasFree = Flag()
        loop.execute {
            _ = release.wait(timeout: .now() + 2)
            loopWasFree.set()
        }

        try await inFlight.reserve()

        XCTAssertFalse(loopWasFree.isSet, "reserve waited for the busy event loop")
        inFlight.track(second.futureResult)
        release.signal()
        first.succeed()
        second.succeed()
        try await inFlight.drain()
    }

    func testAtTheLimitReserveWaitsForTheOldestWriteToFinish() async throws {
        let inFlight = WritesInFlight(limit: 2)
        let (first, second) = try await (write(into: inFlight), write(into: inFlight))

        let reserved = Flag()
        let third = Task {
            try await inFlight.reserve()
            reserved.set()
        }
        try await Task.sleep(nanoseconds: 50_000_000)
        XCTAssertFalse(reserved.isSet, "two writes are outstanding")

        first.succeed()
        try await third.value
        XCTAssertTrue(reserved.isSet)
        second.succeed()
    }

    func testDrainWaitsForEveryWrite() async throws {
        let inFlight = WritesInFlight(limit: 2)
        let (first, second) = try await (write(into: inFlight), write(into: inFlight))

        let drained = Flag()
        let drain = Task {
            try await inFlight.drain()
            drained.set()
        }
        first.succeed()
        try await Task.sleep(nanoseconds: 50_000_000)
        XCTAssertFalse(drained.isSet, "the second write is still outstanding")

        second.succeed()
        try await drain.value
        XCTAssertTrue(drained.isSet)
    }

    func testAFailedWriteIsThrownByTheNextReserveAndByDrain() async throws {
        struct Broken: Error {}
        let inFlight = WritesInFlight(limit: 2)
        let written = try await write(into: inFlight)

        written.fail(Broken())
        try await Task.sleep(nanoseconds: 20_000_000)

        do {
            try await inFlight.reserve()
            XCTFail("reserve should throw the write's failure")
        } catch is Broken {}
        do {
            try await inFlight.drain()
            XCTFail("drain should throw the write's failure")
        } catch is Broken {}
    }

    func testAFailureWakesAReaderWaitingAtTheLimit() async throws {
        struct Broken: Error {}
        let inFlight = WritesInFlight(limit: 1)
        let written = try await write(into: inFlight)
        let waiting = Task { try await inFlight.reserve() }
        try await Task.sleep(nanoseconds: 20_000_000)

        written.fail(Broken())

        do {
            try await waiting.value
            XCTFail("the waiting reserve should throw the write's failure")
        } catch is Broken {}
    }
}

extension WritesInFlightTests {
    /// A write as sendFile issues one: a place reserved, then the write handed over to be counted.
    /// The returned promise finishes it.
    fileprivate func write(into inFlight: WritesInFlight) async throws -> EventLoopPromise<Void> {
        try await inFlight.reserve()
        let promise = loop.makePromise(of: Void.self)
        inFlight.track(promise.futureResult)
        return promise
    }
}

private final class Flag: Sendable {
    private let value = Mutex(false)
    var isSet: Bool { value.withLock { $0 } }
    func set() { value.withLock { $0 = true } }
}
