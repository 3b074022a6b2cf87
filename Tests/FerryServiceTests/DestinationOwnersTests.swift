import FerryContract
import Testing
@testable import FerryService

/// A share that names no account goes out as the one account that has all its destinations, or
/// else each destination as the account that has it.
struct DestinationOwnersTests {
    let owners = DestinationOwners()
    let both: Set = ["@me:work", "@me:home"]

    init() {
        owners.record(
            [
                DestinationListing(id: "!shared", kind: .room, name: "Both"),
                DestinationListing(id: "!w", kind: .room, name: "Work", alias: "#team:work"),
            ], of: "@me:work")
        owners.record(
            [
                DestinationListing(id: "!shared", kind: .room, name: "Both"),
                DestinationListing(id: "!dm", kind: .direct, name: "Mum", userID: "@mum:home"),
            ], of: "@me:home")
    }

    @Test func aDestinationOnlyOneAccountHasIsThatAccounts() {
        #expect(owners.onlyOwner(of: ["!w"], among: both) == "@me:work")
        #expect(owners.onlyOwner(of: ["#team:work"], among: both) == "@me:work", "by its alias too")
        #expect(owners.onlyOwner(of: ["@mum:home"], among: both) == "@me:home", "a person by their direct chat")
    }

    @Test func aRoomBothHaveOrNoneHasOrAMixtureNamesNobody() {
        #expect(owners.onlyOwner(of: ["!shared"], among: both) == nil)
        #expect(owners.onlyOwner(of: ["!unknown"], among: both) == nil)
        #expect(owners.onlyOwner(of: ["!w", "@mum:home"], among: both) == nil)
        #expect(owners.onlyOwner(of: [], among: both) == nil)
    }

    @Test func onlySignedInAccountsCountAndANewListReplacesTheOld() {
        #expect(owners.onlyOwner(of: ["!shared"], among: ["@me:home"]) == "@me:home")
        owners.record([DestinationListing(id: "!shared", kind: .room, name: "Both")], of: "@me:work")
        #expect(owners.onlyOwner(of: ["!w"], among: both) == nil, "work left !w")
    }

    @Test func eachDestinationGoesOutAsTheAccountThatHasItWhenNoneHasThemAll() {
        let signedIn = ["@me:home", "@me:work"] // the last signed in first
        #expect(
            owners.accounts(for: ["!w", "@mum:home"], among: signedIn) == ["@me:work", "@me:home"],
            "one share, two accounts")
        #expect(owners.accounts(for: ["!w", "!shared"], among: signedIn) == ["@me:work", "@me:work"], "work has both")
        #expect(
            owners.accounts(for: ["!shared", "!unknown"], among: signedIn) == ["@me:home", "@me:home"],
            "a room both have, or none, goes as the account signed in last")
        #expect(
            owners.accounts(for: ["@mum:home", "!shared", "!w"], among: ["@me:other", "@me:home", "@me:work"])
                == ["@me:home", "@me:home", "@me:work"],
            "a room some accounts have goes as the last signed in of those, never one not in it")
        #expect(owners.accounts(for: ["!w"], among: ["@me:home"]) == ["@me:home"], "one account sends everything")
        #expect(owners.accounts(for: ["!w"], among: []).isEmpty, "nobody signed in")
    }
}

/// What the service asks the servers before accepting a share to rooms no list has placed.
struct DestinationOwnersLookUpTests {
    @Test func onlyRoomsNoSignedInAccountIsKnownToHaveNeedAskingAndOnlyWithSeveralAccounts() {
        let owners = DestinationOwners()
        owners.record([DestinationListing(id: "!w", kind: .room, name: "Work")], of: "@me:work")
        let signedIn = ["@me:home", "@me:work"]
        #expect(owners.unknown(["!w"], among: signedIn).isEmpty, "work has it")
        #expect(owners.unknown(["!w", "!new", "@mum:home"], among: signedIn) == ["!new", "@mum:home"])
        #expect(owners.unknown(["!new"], among: ["@me:home"]).isEmpty, "one account sends everything")
        #expect(owners.unknown(["!w"], among: ["@me:home", "@me:other"]) == ["!w"], "work is signed out")
    }

    @Test func whatTheServersSayIsAddedToWhatTheListsSaid() {
        let owners = DestinationOwners()
        owners.record([DestinationListing(id: "!w", kind: .room, name: "Work")], of: "@me:work")
        owners.add(["!new", "#news:work"], of: "@me:work")
        let signedIn = ["@me:home", "@me:work"]
        #expect(owners.unknown(["!w", "!new", "#news:work"], among: signedIn).isEmpty)
        #expect(owners.accounts(for: ["!new", "!w"], among: signedIn) == ["@me:work", "@me:work"])
    }
}
