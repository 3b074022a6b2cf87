import FerryContract
import FerryCore
import Foundation

/// `ferry status` and `ferry destinations`, as JSON (stable, docs/CONTRACT.md) and for people.
enum StatusJSON {
    static func object(_ status: StatusReport) -> String {
        let object: [String: Any] = [
            "signed_in": status.signedIn,
            "user_id": status.userID ?? NSNull(),
            "homeserver": status.homeserver ?? NSNull(),
            "online": status.online,
            "secret_storage": status.secretStorage ?? NSNull(),
            "device_id": status.deviceID ?? NSNull(),
            "device_verification": status.deviceVerification ?? NSNull(),
            "shares": status.shares,
            "accounts": status.accounts.map(AccountJSON.object),
        ]
        return JSONText.encode(object)
    }

    static func text(_ status: StatusReport) -> String {
        var lines: [String] = []
        if status.signedIn {
            lines.append(
                tr(
                    // TRANSLATORS: {user} is a Matrix user id (@me:example.org), {homeserver} a server name or URL.
                    "Signed in as {user} on {homeserver}.",
                    [
                        "user": status.userID ?? "?",
                        "homeserver": status.homeserver ?? "?",
                    ]))
            lines.append(status.online ? tr("Online.") : tr("Offline: shares wait until the homeserver answers again."))
            lines.append(deviceLine(id: status.deviceID, verification: status.deviceVerification))
            if status.secretStorage == "file" {
                lines.append(tr("Warning: no Secret Service runs, so the sign-in is kept in a file only you can read."))
            }
        } else {
            // TRANSLATORS: `ferry login` is a command to type as it is.
            lines.append(tr("Signed out. Sign in with: ferry login"))
        }
        let counts = status.shares.filter { $0.value > 0 }.sorted { $0.key < $1.key }
        // The states stay the contract's words (awaiting-sign-in, queued…), as in `ferry shares`.
        let byState = counts.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
        lines.append(
            counts.isEmpty
                ? tr("No shares.")
                // TRANSLATORS: `ferry status`; {counts} is a list such as "2 queued, 1 sent", with the state names
                // untranslated.
                : tr("Shares: {counts}.", ["counts": byState]))
        return lines.joined(separator: "\n")
    }

    /// Ferry's device, and whether its owner verified it.
    /// Whole sentences with and without the device id: "This device" is the subject of each.
    static func deviceLine(id: String?, verification: String?) -> String {
        switch verification {
        case "verified":
            // TRANSLATORS: `ferry status`; {id} is Ferry's Matrix device id (ABCDEFGH).
            return id.map { tr("This device ({id}) is verified.", ["id": $0]) } ?? tr("This device is verified.")
        case "unverified":
            return id.map {
                tr(
                    // TRANSLATORS: `ferry verify` is a command to type as it is; {id} is Ferry's Matrix device id.
                    "This device ({id}) is not verified: verify it with ferry verify, or others may see a warning on what it sends.",
                    ["id": $0])
            }
                ?? tr(
                    // TRANSLATORS: `ferry verify` is a command to type as it is.
                    "This device is not verified: verify it with ferry verify, or others may see a warning on what it sends."
                )
        case "no-identity":
            return id.map {
                tr(
                    // TRANSLATORS: `ferry verify --set-up` is a command to type as it is; {id} is Ferry's Matrix device
                    // id.
                    "This device ({id}) cannot be verified yet: the account has no cross-signing identity (set one up with ferry verify --set-up).",
                    ["id": $0])
            }
                ?? tr(
                    // TRANSLATORS: `ferry verify --set-up` is a command to type as it is.
                    "This device cannot be verified yet: the account has no cross-signing identity (set one up with ferry verify --set-up)."
                )
        default:
            // TRANSLATORS: {id} is Ferry's Matrix device id (ABCDEFGH).
            return id.map { tr("This device ({id}): whether it is verified is not known yet.", ["id": $0]) }
                ?? tr("This device: whether it is verified is not known yet.")
        }
    }

}

enum DestinationJSON {
    static func array(_ list: [DestinationListing]) -> String {
        JSONText.encode(
            list.map { entry -> [String: Any] in
                [
                    "id": entry.id,
                    "kind": entry.kind.rawValue,
                    "name": entry.name,
                    "alias": entry.alias ?? NSNull(),
                    "user_id": entry.userID ?? NSNull(),
                    "members": entry.members,
                    "encrypted": entry.encrypted,
                    "last_activity": entry.lastActivity.map { Timestamp.iso8601(microseconds: $0) } ?? NSNull(),
                    "recent": entry.recent,
                    "account": entry.account ?? NSNull(),
                    "avatar": entry.avatar ?? NSNull(),
                ]
            })
    }

    static func table(_ list: [DestinationListing]) -> String {
        guard !list.isEmpty else { return tr("No rooms or people match.") }
        return list.map { entry in
            let name = SafeDisplay.escaped(entry.name)
            let id = entry.alias ?? entry.id
            var notes: [String] = []
            // TRANSLATORS: notes after a room in `ferry destinations`, in parentheses: "(recent, end-to-end
            // encrypted)".
            if entry.recent { notes.append(trc("destination", "recent")) }
            // TRANSLATORS: a note after a person in `ferry destinations`: sharing to them opens a new direct chat.
            if entry.kind == .person { notes.append(trc("destination", "new direct chat")) }
            // TRANSLATORS: a note after a room in `ferry destinations`.
            if entry.encrypted { notes.append(trc("destination", "end-to-end encrypted")) }
            return "\(name)  \(SafeDisplay.escaped(id))"
                + (notes.isEmpty ? "" : "  (" + notes.joined(separator: ", ") + ")")
        }.joined(separator: "\n")
    }
}

/// Pretty, sorted JSON; an empty array is `[]`.
enum JSONText {
    static func encode(_ value: Any) -> String {
        guard
            let data = try? JSONSerialization.data(
                withJSONObject: value,
                options: [
                    .prettyPrinted, .sortedKeys,
                    .withoutEscapingSlashes,
                ])
        else {
            return "null"
        }
        return compactingEmptyArrays(String(decoding: data, as: UTF8.self))
    }

    /// One object on one line: a stream of them reads as JSON Lines.
    static func line(_ value: Any) -> String {
        guard
            let data = try? JSONSerialization.data(
                withJSONObject: value, options: [.sortedKeys, .withoutEscapingSlashes])
        else {
            return "null"
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// Foundation on Linux pretty-prints an empty array as "[", a blank line, "]"; the contract
    /// shows `[]`. A JSON string never holds a raw newline, so only empty arrays match.
    static func compactingEmptyArrays(_ text: String) -> String {
        var lines: [Substring] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.trimmingCharacters(in: .whitespaces) == "]", let last = lines.last,
                last.trimmingCharacters(in: .whitespaces).isEmpty, lines.count >= 2,
                lines[lines.count - 2].hasSuffix("[")
            {
                lines.removeLast()
                let opener = lines.removeLast()
                lines.append(opener + line.trimmingCharacters(in: .whitespaces))
            } else {
                lines.append(line)
            }
        }
        return lines.joined(separator: "\n")
    }
}
