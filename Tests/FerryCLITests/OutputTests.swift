import FerryContract
import FerryCore
import Testing
@testable import FerryCLI

/// What the command line prints: the JSON the contract promises (docs/CONTRACT.md) and the lines
/// for people, from plain values.
struct OutputTests {
    @Test func aSignedOutStatusIsNullsInJSONAndOneLineForPeople() {
        let status = StatusReport(
            signedIn: false, userID: nil, homeserver: nil, online: true, secretStorage: nil,
            deviceID: nil, deviceVerification: nil, shares: [.queued: 1], accounts: [])
        let json = StatusJSON.object(status)
        #expect(json.contains("\"user_id\" : null") && json.contains("\"signed_in\" : false"))
        #expect(json.contains("\"queued\" : 1") && json.contains("\"failed\" : 0"))
        #expect(StatusJSON.text(status) == "Signed out. Sign in with: ferry login\nShares: 1 queued.")
    }

    @Test func aSignedInStatusNamesTheDeviceAndCountsOnlyStatesThatHaveShares() {
        let status = StatusReport(
            signedIn: true, userID: "@ann:h", homeserver: "https://h", online: false,
            secretStorage: "file", deviceID: "DEV", deviceVerification: "unverified",
            shares: [.sent: 3, .failed: 1], accounts: [])
        let lines = StatusJSON.text(status).split(separator: "\n")
        #expect(lines.first == "Signed in as @ann:h on https://h.")
        #expect(lines.contains("Offline: shares wait until the homeserver answers again."))
        #expect(lines.contains { $0.hasPrefix("This device (DEV) is not verified") })
        #expect(lines.contains { $0.hasPrefix("Warning: no Secret Service runs") })
        #expect(lines.last == "Shares: 1 failed, 3 sent.")
    }

    @Test func accountsAreListedWithTheirDeviceEachAsStatusSaysIt() {
        let accounts = [
            AccountListing(
                userID: "@ann:work", homeserver: "https://work", deviceID: "W", deviceVerification: "verified",
                online: true),
            AccountListing(
                userID: "@ann:home", homeserver: "https://home", deviceID: "H", deviceVerification: nil, online: false),
        ]
        let json = AccountJSON.array(accounts)
        #expect(json.contains("\"user_id\" : \"@ann:work\"") && json.contains("\"device_verification\" : null"))
        #expect(json.contains("\"device_id\" : \"H\"") && json.contains("\"online\" : false"))
        let text = AccountJSON.text(accounts).components(separatedBy: "\n\n")
        #expect(text.count == 2)
        #expect(text[0] == "Signed in as @ann:work on https://work.\nOnline.\nThis device (W) is verified.")
        #expect(text[1].hasPrefix("Signed in as @ann:home on https://home.\nOffline: "))
        #expect(AccountJSON.array([]) == "[]")
        #expect(AccountJSON.text([]) == "Signed out. Sign in with: ferry login")
    }

    @Test func destinationsShowTheirAliasAndWhatSetsThemApart() {
        let list = [
            DestinationListing(id: "!r", kind: .room, name: "Harbour", alias: "#h:x", encrypted: true, recent: true),
            DestinationListing(id: "@bo:x", kind: .person, name: "Bo\u{202E}", userID: "@bo:x"),
        ]
        let table = DestinationJSON.table(list).split(separator: "\n")
        #expect(table[0] == "Harbour  #h:x  (recent, end-to-end encrypted)")
        #expect(table[1].hasSuffix("@bo:x  (new direct chat)"))
        #expect(!table[1].contains("\u{202E}"), "a name cannot turn the terminal's text around")
        #expect(DestinationJSON.table([]) == "No rooms or people match.")
        #expect(DestinationJSON.array([]) == "[]")
    }

    @Test func timesInJSONAreUTCWithMilliseconds() {
        #expect(Timestamp.iso8601(microseconds: 1_795_276_800_123_456) == "2026-11-21T16:00:00.123Z")
        #expect(Timestamp.iso8601(microseconds: 0) == "1970-01-01T00:00:00.000Z")
    }

    @Test func anEmptyArrayIsWrittenOnOneLine() {
        #expect(JSONText.compactingEmptyArrays("{\n  \"a\" : [\n\n  ]\n}") == "{\n  \"a\" : []\n}")
        #expect(JSONText.compactingEmptyArrays("[\n  1\n]") == "[\n  1\n]")
    }

    @Test func theServerIsTakenFromAFullUserID() {
        #expect(LoginCommand.serverName(of: "@ann:example.org") == "example.org")
        #expect(LoginCommand.serverName(of: "@ann:example.org:8448") == "example.org:8448")
        #expect(LoginCommand.serverName(of: "ann") == nil)
        #expect(LoginCommand.serverName(of: "@ann:") == nil)
    }
}
