import FerryCore
import XCTest

/// Where a new share goes next, and what each state means.
final class RoutingTests: XCTestCase {
    func testSignedOutSharesAwaitSignInWhateverTheirDestinations() {
        XCTAssertEqual(Routing.route(destinations: [], signedIn: false), .awaitingSignIn)
        XCTAssertEqual(Routing.route(destinations: ["!room:example.org"], signedIn: false), .awaitingSignIn)
    }

    func testSignedInSharesWithoutDestinationsAwaitADestination() {
        XCTAssertEqual(Routing.route(destinations: [], signedIn: true), .awaitingDestination)
    }

    func testSignedInSharesWithDestinationsAreQueued() {
        XCTAssertEqual(Routing.route(destinations: ["!room:example.org", "@u:s"], signedIn: true), .queued)
    }

    func testOnlySentFailedAndCancelledAreFinal() {
        XCTAssertEqual(Set(ShareState.allCases.filter(\.isFinal)), [.sent, .failed, .cancelled])
    }

    func testEveryStateButSentAndCancelledMayBeCancelled() {
        XCTAssertEqual(Set(ShareState.allCases.filter { !$0.isCancellable }), [.sent, .cancelled])
    }

    func testOnlyTheAwaitingStatesWaitForAPerson() {
        XCTAssertEqual(Set(ShareState.allCases.filter(\.awaitsPerson)), [.awaitingSignIn, .awaitingDestination])
    }

    func testOnlyQueuedAndSendingAreWorkForTheService() {
        XCTAssertEqual(Set(ShareState.allCases.filter(\.isPendingWork)), [.queued, .sending])
    }

    func testNoStateIsBothWaitingForAPersonAndWorkForTheService() {
        for state in ShareState.allCases {
            XCTAssertFalse(state.awaitsPerson && state.isPendingWork, "\(state)")
            XCTAssertFalse(state.isFinal && state.isPendingWork, "\(state)")
        }
    }

    func testStateNamesAreTheOnesTheInterfaceDocuments() throws {
        XCTAssertEqual(Set(ShareState.allCases.map(\.rawValue)), try InterfaceDocument.stateNames())
    }
}
