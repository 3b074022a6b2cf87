import FerryContract
import FerryCore
import GLibAdapter
import Testing

/// The service's answers, as the contract writes and the clients read them: each comes back as it
/// went, empty values on the bus read as nothing, and the keys are the interface XML's.
struct Share1AnswerTests {
    @Test func aStatusComesBackAsItWentWithEveryStateCounted() {
        let status = StatusReport(
            signedIn: true, userID: "@ann:h", homeserver: "https://h", online: false,
            secretStorage: "file", deviceID: "DEV", deviceVerification: "unverified",
            shares: [.queued: 2, .sent: 5],
            accounts: [
                AccountListing(
                    userID: "@ann:h", homeserver: "https://h", deviceID: "DEV", deviceVerification: "unverified",
                    online: false),
                AccountListing(
                    userID: "@ann:w", homeserver: "https://w", deviceID: "W", deviceVerification: nil, online: true),
            ])
        #expect(StatusReport(status.dictionary) == status)
        #expect(status.shares.count == ShareState.allCases.count)
        #expect(status.shares["failed"] == 0 && status.shares["queued"] == 2)
        let signedOut = StatusReport(
            signedIn: false, userID: nil, homeserver: nil, online: true, secretStorage: nil,
            deviceID: nil, deviceVerification: nil, shares: [:], accounts: [])
        #expect(signedOut.dictionary["user-id"]?.stringValue == "", "the XML documents empty strings, not missing keys")
        #expect(StatusReport(signedOut.dictionary) == signedOut)
    }

    @Test func aServiceOlderThanSeveralAccountsListsItsOneAccount() {
        var older = StatusReport(
            signedIn: true, userID: "@ann:h", homeserver: "https://h", online: true, secretStorage: nil,
            deviceID: "DEV", deviceVerification: "verified", shares: [:], accounts: []
        ).dictionary
        older["accounts"] = nil
        #expect(
            StatusReport(older).accounts == [
                AccountListing(
                    userID: "@ann:h", homeserver: "https://h", deviceID: "DEV", deviceVerification: "verified",
                    online: true)
            ])
    }

    @Test("the properties are read by their contract names, and a change leaves the rest as it was")
    func accountStateFromProperties() {
        var state = AccountState()
        state.update([
            "SignedIn": .bool(true), "AccountId": .string("@ann:h"), "Homeserver": .string("https://h"),
            "Online": .bool(false), "DeviceVerification": .string("unverified"),
            "Accounts": .strings(["@ann:h", "@bo:x"]),
        ])
        #expect(state.signedIn && state.accountID == "@ann:h" && state.homeserver == "https://h")
        #expect(!state.online && state.deviceVerification == "unverified")
        #expect(state.accounts == ["@ann:h", "@bo:x"])
        state.update(["Online": .bool(true)])
        #expect(state.online && state.accountID == "@ann:h")
        #expect(Share1Property.allCases.count == 6, "a new property is read here too")
    }

    @Test func destinationsComeBackAsTheyWent() throws {
        let entries = [
            DestinationListing(
                id: "!r", kind: .room, name: "Harbour", alias: "#h:x", members: 3, encrypted: true,
                lastActivity: 1_700_000_000_000_000, recent: true, account: "@me:x"),
            DestinationListing(id: "@bo:x", kind: .person, name: "Bo", userID: "@bo:x"),
        ]
        for entry in entries { #expect(DestinationListing(entry.dictionary) == entry) }
        #expect(DestinationListing(["name": .string("no id")]) == nil)
    }

    @Test func anEmojiVerificationComesBackAsItWentAndNoneReadsAsNone() {
        let comparing = EmojiVerificationReport(
            state: "comparing", id: "v1", deviceID: "PHONE", deviceName: "Phone",
            emoji: ["🐶", "🔑"], emojiNames: ["Dog", "Key"], decimal: "1234 5678 9012")
        #expect(EmojiVerificationReport(comparing.dictionary) == comparing)
        let ended = EmojiVerificationReport(
            state: "done", id: "v1", deviceID: "PHONE", deviceName: "", verification: "verified")
        #expect(EmojiVerificationReport(ended.dictionary) == ended)
        #expect(ended.hasEnded && !comparing.hasEnded)
        #expect(EmojiVerificationReport([:]) == nil)
    }

    @Test func loginFlowsComeBackAsTheyWentAndAnOlderServiceReadsAsAPasswordLogin() {
        let flows = LoginFlows(homeserver: "https://matrix.example.org", password: false, sso: true, token: true)
        #expect(LoginFlows(flows.dictionary, asked: "example.org") == flows)
        #expect(
            LoginFlows([:], asked: "example.org")
                == LoginFlows(homeserver: "example.org", password: true, sso: false, token: false))
    }

    @Test func accountAnswersComeBackAsTheyWent() {
        let account = SignedInAccount(userID: "@ann:h", homeserver: "https://h", deviceID: "D")
        #expect(SignedInAccount(account.dictionary) == account)
        let setUp = CrossSigningSetUp(recoveryKey: "EsTc abcd", verification: "verified")
        #expect(CrossSigningSetUp(setUp.dictionary) == setUp)
    }
}
