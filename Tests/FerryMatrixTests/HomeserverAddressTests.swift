import FerryMatrix
import XCTest

/// https:// anywhere, http:// only on this computer; everything else is refused before a request.
final class HomeserverAddressTests: XCTestCase {
    func testHTTPSAnywhereAndHTTPOnLoopbackAreUsed() throws {
        XCTAssertEqual(try HomeserverAddress.checked("https://matrix.example.org/"), "https://matrix.example.org")
        XCTAssertEqual(
            try HomeserverAddress.checked("https://matrix.example.org:8448"), "https://matrix.example.org:8448")
        for loopback in ["http://127.0.0.1:8008", "http://localhost:8008", "http://[::1]:8008", "http://127.5.6.7"] {
            XCTAssertEqual(try HomeserverAddress.checked(loopback), loopback)
        }
    }

    func testPlainHTTPToAnotherComputerIsRefusedWithAReason() {
        for address in [
            "http://matrix.example.org", "http://10.0.0.5:8008", "http://127.0.0.1.example.org",
            "http://localhost.evil.example", "HTTP://matrix.example.org",
        ] {
            XCTAssertThrowsError(try HomeserverAddress.checked(address), address) { error in
                let error = error as! MatrixError
                XCTAssertEqual(error.kind, .refused)
                XCTAssertTrue(error.message.contains("https://"), error.message)
            }
        }
    }

    func testWhatIsNotAnHTTPAddressIsRefused() {
        for address in [
            "ftp://matrix.example.org", "https://", "https://user:pw@matrix.example.org",
            "https://matrix.example.org/?next=evil", "javascript:alert(1)", "https://exa mple.org",
        ] {
            XCTAssertThrowsError(try HomeserverAddress.checked(address), address) { error in
                XCTAssertEqual((error as! MatrixError).kind, .refused)
            }
        }
    }
}
