import FerryContract
import FerryCore
import Foundation

/// `ferry accounts`, as JSON (stable, docs/CONTRACT.md) and for people.
enum AccountJSON {
    static func object(_ account: AccountListing) -> [String: Any] {
        [
            "user_id": account.userID,
            "homeserver": account.homeserver,
            "device_id": account.deviceID,
            "device_verification": account.deviceVerification ?? NSNull(),
            "online": account.online,
        ]
    }

    static func array(_ accounts: [AccountListing]) -> String {
        JSONText.encode(accounts.map(object))
    }

    /// Each account as `ferry status` says it: who and where, online or not, the device; a blank
    /// line between accounts.
    static func text(_ accounts: [AccountListing]) -> String {
        // TRANSLATORS: `ferry login` is a command to type as it is.
        guard !accounts.isEmpty else { return tr("Signed out. Sign in with: ferry login") }
        return accounts.map { account in
            [
                tr(
                    // TRANSLATORS: {user} is a Matrix user id (@me:example.org), {homeserver} a server name or URL.
                    "Signed in as {user} on {homeserver}.",
                    ["user": account.userID, "homeserver": account.homeserver]),
                account.online ? tr("Online.") : tr("Offline: shares wait until the homeserver answers again."),
                StatusJSON.deviceLine(id: account.deviceID, verification: account.deviceVerification),
            ].joined(separator: "\n")
        }.joined(separator: "\n\n")
    }
}
