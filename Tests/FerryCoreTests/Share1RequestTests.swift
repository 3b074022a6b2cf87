import FerryContract
import FerryCore
import GLibAdapter
import Testing

/// The service decodes each call once into a typed request: whatever the one client sends
/// decodes into the request of its own method, and a bad argument is InvalidArgument, naming it.
struct Share1RequestTests {
    /// Every typed call the command line and the UI can make, one per method.
    static let calls: [(method: Share1Method, arguments: [Variant])] = [
        (Share1.share(["text": .string("hi")]).method, Share1.share(["text": .string("hi")]).arguments),
        (Share1.getShare("s").method, Share1.getShare("s").arguments),
        (Share1.listShares().method, Share1.listShares().arguments),
        (Share1.cancel("s").method, Share1.cancel("s").arguments),
        (
            Share1.completeShare("s", destinations: ["!r"], message: "m").method,
            Share1.completeShare("s", destinations: ["!r"], message: "m").arguments
        ),
        (
            Share1.completeShare("s", destinations: ["!r"], message: "m", accounts: ["@me:x"]).method,
            Share1.completeShare("s", destinations: ["!r"], message: "m", accounts: ["@me:x"]).arguments
        ),
        (Share1.retry("s").method, Share1.retry("s").arguments),
        (
            Share1.signIn(SignInRequest(homeserver: "h", method: .browser())).method,
            Share1.signIn(SignInRequest(homeserver: "h", method: .browser())).arguments
        ),
        (Share1.signOut().method, Share1.signOut().arguments),
        (Share1.signOut(account: "@me:x").method, Share1.signOut(account: "@me:x").arguments),
        (Share1.getLoginFlows("h").method, Share1.getLoginFlows("h").arguments),
        (Share1.getStatus().method, Share1.getStatus().arguments),
        (
            Share1.verifyDevice(.recoveryKey("k")).method,
            Share1.verifyDevice(.recoveryKey("k")).arguments
        ),
        (Share1.setUpCrossSigning(password: "p").method, Share1.setUpCrossSigning(password: "p").arguments),
        (Share1.startEmojiVerification(deviceID: "D").method, Share1.startEmojiVerification(deviceID: "D").arguments),
        (
            Share1.answerEmojiVerification("v", match: true).method,
            Share1.answerEmojiVerification("v", match: true).arguments
        ),
        (Share1.cancelEmojiVerification("v").method, Share1.cancelEmojiVerification("v").arguments),
        (Share1.getEmojiVerification().method, Share1.getEmojiVerification().arguments),
        (Share1.listDestinations("q", limit: 5).method, Share1.listDestinations("q", limit: 5).arguments),
        (
            Share1.getAvatar(account: "@me:x", uri: "mxc://x/a", size: 64).method,
            Share1.getAvatar(account: "@me:x", uri: "mxc://x/a", size: 64).arguments
        ),
    ]

    @Test func everyCallTheClientMakesDecodesIntoItsOwnMethodsRequest() throws {
        #expect(Set(Self.calls.map(\.method)) == Set(Share1Method.allCases))
        for call in Self.calls {
            let request = try Share1Request(method: call.method.rawValue, arguments: call.arguments)
            #expect(request.method == call.method)
        }
    }

    @Test func anAvatarIsAskedForByAnAccountAndAPictureOfThisServerOrItsOwn() throws {
        let room = try Share1Request(
            method: "GetAvatar",
            arguments: Share1.getAvatar(account: "@me:x", uri: "mxc://x.org/AbC_1-z", size: 64).arguments)
        guard case .getAvatar("@me:x", let uri?, 64) = room, uri.server == "x.org", uri.mediaID == "AbC_1-z" else {
            Issue.record("\(room)")
            return
        }
        let own = try Share1Request(
            method: "GetAvatar", arguments: Share1.getAvatar(account: "@me:x", uri: nil, size: 16).arguments)
        guard case .getAvatar("@me:x", nil, 16) = own else { Issue.record("\(own)"); return }
        // What could reach a path or a query of its own, or is not a picture of this size, is refused.
        for (account, uri, size) in [
            ("@me:x", "mxc://x.org/a/b", 64), ("@me:x", "mxc://x.org/a?b", 64), ("@me:x", "mxc://x.org/", 64),
            ("@me:x", "mxc://x%2F/a", 64), ("@me:x", "http://x.org/a", 64), ("@me:x", "", 15), ("@me:x", "", 513),
            ("me", "", 64), ("@me:x", "mxc://../config", 64), ("@me:x", "mxc://./a", 64), ("@me:x", "mxc://.x/a", 64),
            ("@me:x", "mxc://x./a", 64), ("@me:x", "mxc://a..b/c", 64),
        ] {
            #expect(throws: ShareError.self, "\(uri) \(size)") {
                try Share1Request(
                    method: "GetAvatar", arguments: [.string(account), .string(uri), .uint32(UInt32(size))])
            }
        }
    }

    @Test func argumentsArriveAsTheClientSentThem() throws {
        let complete = try Share1Request(
            method: "CompleteShare", arguments: [.string("s1"), .strings(["!a", "!b"]), .string("hi")])
        guard case .completeShare("s1", ["!a", "!b"], "hi", nil) = complete else { Issue.record("\(complete)"); return }
        let completeAs = try Share1Request(
            method: "CompleteShareAs",
            arguments: Share1.completeShare("s1", destinations: ["!a", "!a"], message: "hi", accounts: ["@me:x", nil])
                .arguments)
        guard case .completeShare("s1", ["!a", "!a"], "hi", let accounts) = completeAs, accounts == ["@me:x", nil]
        else {
            Issue.record("\(completeAs)")
            return
        }
        let answer = try Share1Request(method: "AnswerEmojiVerification", arguments: [.string("v1"), .bool(false)])
        guard case .answerEmojiVerification("v1", false) = answer else { Issue.record("\(answer)"); return }
        let list = try Share1Request(method: "ListDestinations", arguments: [.string("ali"), .uint32(7)])
        guard case .listDestinations("ali", 7) = list else { Issue.record("\(list)"); return }
        let open = try Share1Request(
            method: "Open", arguments: [.strings(["file:///a"]), .dictionary(["desktop-startup-id": .string("t")])])
        guard case .open(["file:///a"], "t") = open else { Issue.record("\(open)"); return }
        #expect(open.makesShare && !open.waitsForHomeserver && list.waitsForHomeserver)
        let verify = try Share1Request(
            method: "VerifyDevice", arguments: Share1.verifyDevice(.recoveryKey("k"), account: "@me:x").arguments)
        guard case .verifyDevice(.recoveryKey("k"), "@me:x") = verify else { Issue.record("\(verify)"); return }
        let signOut = try Share1Request(method: "SignOutAccount", arguments: [.string("@me:x")])
        guard case .signOut("@me:x") = signOut else { Issue.record("\(signOut)"); return }
        let share = try Share1Request(method: "Share", arguments: [.dictionary(["account": .string("@me:x")])])
        guard case .share(let request, _, []) = share, request.account == "@me:x" else {
            Issue.record("\(share)")
            return
        }
    }

    @Test func creatingAnAccountIsInTheBrowserNeverWithAPassword() {
        #expect(throws: ShareError.self) {
            try SignInRequest([
                "homeserver": .string("h"), "user": .string("a"), "password": .string("p"),
                "create-account": .bool(true),
            ])
        }
        #expect(
            (try? SignInRequest(["homeserver": .string("h"), "create-account": .bool(true)]))?.method
                == .browser(createAccount: true))
    }

    @Test func signInAndDeviceSecretsComeBackAsTheyWent() throws {
        let requests: [SignInRequest] = [
            SignInRequest(homeserver: "https://h", method: .password(user: "ann", password: "pw")),
            SignInRequest(homeserver: "https://h", method: .accessToken("syt_x")),
            SignInRequest(homeserver: "https://h", method: .browser()),
            SignInRequest(homeserver: "https://h", method: .browser(createAccount: true)),
        ]
        for request in requests { #expect(try SignInRequest(request.dictionary) == request) }
        for secret in [DeviceSecret.recoveryKey("EsT"), .passphrase("words"), .either("either")] {
            #expect(try DeviceSecret(secret.dictionary) == secret)
        }
    }

    @Test(
        arguments: [
            ("CompleteShare", [Variant.string("s1"), .string("!a"), .string("hi")], "CompleteShare takes (s, as, s)."),
            ("Open", [Variant.string("file:///a")], "Open takes a list of URIs"),
            (
                "CompleteShareAs", [Variant.string("s1"), .strings(["!a"]), .string("hi")],
                "CompleteShareAs takes (s, aa{sv}, s)."
            ),
            (
                "CompleteShareAs", [Variant.string("s1"), .dictionaries([["account": .string("@me:x")]]), .string("")],
                "Each destination needs its “destination”"
            ),
            (
                "CompleteShareAs",
                [
                    Variant.string("s1"), .dictionaries([["destination": .string("!a"), "account": .string("me")]]),
                    .string(""),
                ],
                "“account” must be a Matrix user id"
            ),
            (
                "VerifyDevice", [Variant.dictionary(["recovery-key": .string("k"), "account": .string("ann")])],
                "“account” must be a Matrix user id"
            ),
            ("Share", [Variant.dictionary(["account": .uint32(1)])], "“account” must be of type “s”"),
            (
                "SignIn", [Variant.dictionary(["homeserver": .string("h"), "sso": .string("yes")])],
                "“sso” must be of type “b”"
            ),
            (
                "SignIn", [Variant.dictionary(["user": .string("ann"), "password": .string("pw")])],
                "Say which homeserver"
            ),
            (
                "SignIn", [Variant.dictionary(["homeserver": .string("h"), "access-token": .string("")])],
                "The access token is empty."
            ),
            (
                "VerifyDevice", [Variant.dictionary(["recovery-key": .string("k"), "passphrase": .string("p")])],
                "Give one of"
            ),
            ("VerifyDevice", [Variant.dictionary(["passphrase": .string("   ")])], "Enter your recovery key"),
            ("SetUpCrossSigning", [Variant.dictionary(["password": .int64(1)])], "“password” must be of type “s”"),
            (
                "StartEmojiVerification",
                [Variant.dictionary(["device-id": .string(String(repeating: "D", count: 256))])], "“device-id”"
            ),
            ("Share", [Variant.dictionary(["uris": .string("file:///a")])], "“uris” must be of type “as”"),
            ("Frobnicate", [Variant](), "Ferry does not implement Frobnicate yet."),
        ] as [(String, [Variant], String)])
    func aBadArgumentIsInvalidArgumentNamingIt(method: String, arguments: [Variant], sentence: String) {
        do {
            let request = try Share1Request(method: method, arguments: arguments)
            Issue.record("\(method) was taken as \(request)")
        } catch {
            #expect(error.shortName == "InvalidArgument")
            #expect(error.message.contains(sentence), "\(error.message)")
        }
    }
}
