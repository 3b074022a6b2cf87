import FerryAccount
import FerryContract
import FerryCore
import FerryEncryption
import Testing
@testable import FerryService

/// The contract's requests as the service's parts take them, and the service's values as the
/// contract's answers.
struct AccountCodecTests {
    @Test func eachSignInRequestBecomesTheAccountsCredentials() {
        let password = AccountCodec.credentials(
            SignInRequest(homeserver: "h", method: .password(user: "ann", password: "pw")))
        guard case .password("ann", "pw") = password.method else { Issue.record("\(password.method)"); return }
        let token = AccountCodec.credentials(SignInRequest(homeserver: "h", method: .accessToken("t")))
        guard case .accessToken("t") = token.method else { Issue.record("\(token.method)"); return }
        let browser = AccountCodec.credentials(SignInRequest(homeserver: "h", method: .browser()))
        guard case .browser(_, false) = browser.method else { Issue.record("\(browser.method)"); return }
        #expect(browser.homeserver == "h")
        let create = AccountCodec.credentials(SignInRequest(homeserver: "h", method: .browser(createAccount: true)))
        guard case .browser(_, true) = create.method else { Issue.record("\(create.method)"); return }
    }
}
