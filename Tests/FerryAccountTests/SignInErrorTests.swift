import FerryCore
import FerryMatrix
import Testing
@testable import FerryAccount

/// What a person reads when a sign-in fails: a server that is not there is not a wrong password.
struct SignInErrorTests {
    @Test func aServerThatDoesNotAnswerAsMatrixIsUnreachableNotARefusal() {
        let transport = Account.signInError(
            MatrixError(kind: .transport, message: "connection refused"),
            homeserver: "https://h", method: .accessToken("t"))
        #expect(transport.shortName == "HomeserverUnreachable")
        #expect(transport.message.contains("connection refused"))
        let notFound = Account.signInError(
            MatrixError(kind: .http(status: 404), errcode: "M_UNRECOGNIZED", message: "no"),
            homeserver: "https://h", method: .password(user: "a", password: "b"))
        #expect(notFound.shortName == "HomeserverUnreachable")
        #expect(notFound.message.contains("does not answer as a Matrix homeserver"))
    }

    @Test func aRefusalSaysWhatWasRefused() {
        let forbidden = MatrixError(kind: .http(status: 403), errcode: "M_FORBIDDEN", message: "Invalid password")
        #expect(
            Account.signInError(forbidden, homeserver: "h", method: .password(user: "a", password: "b")).message
                .contains("user name and password"))
        #expect(
            Account.signInError(forbidden, homeserver: "h", method: .accessToken("t")).message.contains("access token"))
        #expect(
            Account.signInError(forbidden, homeserver: "h", method: .browser(open: { _ in })).message.contains(
                "browser"))
    }

    @Test func theSingleSignOnStateIsFreshAndLongEnough() {
        let one = SSORedirect.randomHex(), two = SSORedirect.randomHex()
        #expect(one.count == 32 && one.allSatisfy(\.isHexDigit))
        #expect(one != two)
    }
}
