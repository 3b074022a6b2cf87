import FerryCore
import FerryMatrix
import FerryOutbox
import Testing
@testable import FerryAccount

/// What a person reads when a sign-in fails: a server that is not there is not a wrong password.
struct SignInErrorTests {
    @Test func aServerThatDoesNotAnswerAsMatrixIsUnreachableNotARefusal() {
        let transport = ShareError(
            SignInFlow.signInError(
                MatrixError(kind: .transport, message: "connection refused"),
                homeserver: "https://h", method: .accessToken("t")))
        #expect(transport.shortName == "HomeserverUnreachable")
        #expect(transport.message.contains("connection refused"))
        let notFound = ShareError(
            SignInFlow.signInError(
                MatrixError(kind: .http(status: 404), errcode: "M_UNRECOGNIZED", message: "no"),
                homeserver: "https://h", method: .password(user: "a", password: "b")))
        #expect(notFound.shortName == "HomeserverUnreachable")
        #expect(notFound.message.contains("does not answer as a Matrix homeserver"))
    }

    @Test func aRefusalSaysWhatWasRefused() {
        let forbidden = MatrixError(kind: .http(status: 403), errcode: "M_FORBIDDEN", message: "Invalid password")
        #expect(
            ShareError(SignInFlow.signInError(forbidden, homeserver: "h", method: .password(user: "a", password: "b")))
                .message
                .contains("user name and password"))
        #expect(
            ShareError(SignInFlow.signInError(forbidden, homeserver: "h", method: .accessToken("t"))).message.contains(
                "access token"))
        #expect(
            ShareError(SignInFlow.signInError(forbidden, homeserver: "h", method: .browser(open: { _ in }))).message
                .contains(
                    "browser"))
    }

    @Test("each sign-in failure keeps its D-Bus name and says what happened")
    func contractNames() {
        let cases: [(SignInError, String, String)] = [
            (.unsupported(homeserver: "https://h", method: .browser), "UnsupportedLogin", "https://h"),
            (.inProgress, "SignInInProgress", "already waiting"),
            (.noBrowser(reason: "no xdg-open"), "SignInFailed", "no xdg-open"),
            (.browserTimedOut(minutes: 5), "SignInFailed", "5 minutes"),
            (.tokenNotKept, "SignInFailed", "Secret Service"),
            (.storage(OutboxError(reason: "database or disk is full", code: 13)), "StorageFailed", "disk is full"),
            (.failed(reason: "the loopback port is taken"), "SignInFailed", "loopback port"),
        ]
        for (error, name, words) in cases {
            #expect(ShareError(error).shortName == name, "\(error)")
            #expect(ShareError(error).message.contains(words), "\(ShareError(error).message)")
        }
    }

    @Test func theSingleSignOnStateIsFreshAndLongEnough() {
        let one = LoopbackRedirect.randomHex(), two = LoopbackRedirect.randomHex()
        #expect(one.count == 32 && one.allSatisfy(\.isHexDigit))
        #expect(one != two)
    }
}
