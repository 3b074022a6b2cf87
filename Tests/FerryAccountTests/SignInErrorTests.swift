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
            (
                .unusableSignInService(homeserver: "https://h", reason: "it does not offer PKCE with S256"),
                "SignInFailed", "sign-in service of https://h cannot be used: it does not offer PKCE"
            ),
            (.declined, "SignInFailed", "not allowed"),
        ]
        for (error, name, words) in cases {
            #expect(ShareError(error).shortName == name, "\(error)")
            #expect(ShareError(error).message.contains(words), "\(ShareError(error).message)")
        }
    }

    @Test func metadataFerryDoesNotUseIsSaidAsTheSignInServiceNotAPassword() {
        let error = MatrixError(kind: .refused, errcode: AuthMetadata.refusalErrcode, message: "its issuer is http")
        let said = ShareError(SignInFlow.signInError(error, homeserver: "h", method: .browser(open: { _ in })))
        #expect(said.message.contains("sign-in service of h cannot be used: its issuer is http"), "\(said.message)")
    }

    @Test("the loopback redirect takes exactly one answer carrying its state")
    func loopbackAnswers() {
        let expected = LoopbackRedirect.Expected(
            host: "127.0.0.1:80", path: "/ferry-oauth/p", state: "S", answers: ["code", "error"])
        #expect(expected.answer(uri: "/ferry-oauth/p?code=c%2B1&state=S&iss=x", host: "127.0.0.1:80")?["code"] == "c+1")
        #expect(expected.answer(uri: "/ferry-oauth/p?error=access_denied&state=S", host: "127.0.0.1:80") != nil)
        for (uri, host) in [
            ("/ferry-oauth/p?code=c&state=T", "127.0.0.1:80"), // another state
            ("/ferry-oauth/p?code=c", "127.0.0.1:80"), // none
            ("/ferry-oauth/p?code=c&state=S&state=T", "127.0.0.1:80"), // twice
            ("/ferry-oauth/p?code=c&code=d&state=S", "127.0.0.1:80"),
            ("/ferry-oauth/q?code=c&state=S", "127.0.0.1:80"), // another path
            ("/ferry-oauth/p?code=c&state=S", "evil.example"), // another Host
            ("/ferry-oauth/p?code=&state=S", "127.0.0.1:80"), // nothing given
            ("/ferry-oauth/p?loginToken=t&state=S", "127.0.0.1:80"), // not an OAuth answer
        ] {
            #expect(expected.answer(uri: uri, host: host) == nil, "\(uri) \(host)")
        }
    }

    @Test func theSingleSignOnStateIsFreshAndLongEnough() {
        let one = Random.hex(), two = Random.hex()
        #expect(one.count == 32 && one.allSatisfy(\.isHexDigit))
        #expect(one != two)
    }
}
