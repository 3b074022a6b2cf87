@testable import FerryUI
import XCTest

/// How ferry-ui reads the command line the service starts it with.
final class LaunchRequestTests: XCTestCase {
    private func parse(
        _ arguments: [String], env: [String: String] = [:]
    ) -> Result<LaunchRequest, LaunchRequest.Failure> {
        LaunchRequest.parse(arguments) { env[$0] }
    }

    func testNoArgumentsOpensTheMainWindow() {
        XCTAssertEqual(try parse([]).get().window, .main)
    }

    func testShareOpensThatSharesDialog() {
        XCTAssertEqual(try parse(["--share", "abc"]).get().window, .share(id: "abc"))
        XCTAssertEqual(try parse(["--share=abc"]).get().window, .share(id: "abc"))
    }

    func testSignInWithAndWithoutAShare() {
        XCTAssertEqual(try parse(["--sign-in"]).get().window, .signIn(shareID: nil))
        XCTAssertEqual(try parse(["--sign-in", "--share", "abc"]).get().window, .signIn(shareID: "abc"))
    }

    func testTheActivationTokenComesFromTheOptionThenWaylandThenX11() {
        let env = ["XDG_ACTIVATION_TOKEN": "wayland", "DESKTOP_STARTUP_ID": "x11"]
        XCTAssertEqual(try parse(["--activation-token", "given"], env: env).get().activationToken, "given")
        XCTAssertEqual(try parse([], env: env).get().activationToken, "wayland")
        XCTAssertEqual(try parse([], env: ["DESKTOP_STARTUP_ID": "x11"]).get().activationToken, "x11")
        XCTAssertNil(try parse([]).get().activationToken)
    }

    func testMistakesAreUsageErrors() {
        XCTAssertEqual(parse(["--share"]), .failure(.usage("--share needs a share id")))
        XCTAssertEqual(parse(["--frobnicate"]), .failure(.usage("unknown argument --frobnicate")))
        XCTAssertEqual(parse(["--help"]), .failure(.help))
    }
}
