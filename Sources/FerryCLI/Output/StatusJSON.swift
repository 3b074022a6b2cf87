import FerryCore
import Foundation
import GLibAdapter

/// `ferry status` and `ferry destinations`, as JSON (stable, docs/CONTRACT.md) and for people.
enum StatusJSON {
    static func object(_ status: [String: Variant]) -> String {
        var shares: [String: Int] = [:]
        for (state, count) in status["shares"]?.dictionaryValue ?? [:] { shares[state] = Int(count.uint32Value ?? 0) }
        let object: [String: Any] = [
            "signed_in": status["signed-in"]?.boolValue ?? false,
            "user_id": nonEmpty(status["user-id"]) ?? NSNull(),
            "homeserver": nonEmpty(status["homeserver"]) ?? NSNull(),
            "online": status["online"]?.boolValue ?? false,
            "secret_storage": nonEmpty(status["secret-storage"]) ?? NSNull(),
            "device_id": nonEmpty(status["device-id"]) ?? NSNull(),
            "device_verification": nonEmpty(status["device-verification"]) ?? NSNull(),
            "shares": shares,
        ]
        return JSONText.encode(object)
    }

    static func text(_ status: [String: Variant]) -> String {
        var lines: [String] = []
        if status["signed-in"]?.boolValue == true {
            lines.append("Signed in as \(nonEmpty(status["user-id"]) ?? "?") on \(nonEmpty(status["homeserver"]) ?? "?").")
            lines.append(status["online"]?.boolValue == true ? "Online." : "Offline: shares wait until the homeserver answers again.")
            lines.append(deviceLine(status))
            if nonEmpty(status["secret-storage"]) == "file" {
                lines.append("Warning: no Secret Service runs, so the sign-in is kept in a file only you can read.")
            }
        } else {
            lines.append("Signed out. Sign in with: ferry login")
        }
        let counts = (status["shares"]?.dictionaryValue ?? [:]).compactMap { state, count -> (String, UInt32)? in
            guard let n = count.uint32Value, n > 0 else { return nil }
            return (state, n)
        }.sorted { $0.0 < $1.0 }
        lines.append(counts.isEmpty ? "No shares." : "Shares: " + counts.map { "\($0.1) \($0.0)" }.joined(separator: ", ") + ".")
        return lines.joined(separator: "\n")
    }

    /// Ferry's device, and whether its owner verified it.
    static func deviceLine(_ status: [String: Variant]) -> String {
        let device = nonEmpty(status["device-id"]).map { "This device (\($0))" } ?? "This device"
        switch nonEmpty(status["device-verification"]) {
        case "verified": return "\(device) is verified."
        case "unverified": return "\(device) is not verified: verify it with ferry verify, or others may see a warning on what it sends."
        case "no-identity":
            return "\(device) cannot be verified yet: the account has no cross-signing identity (set one up with ferry verify --set-up)."
        default: return "\(device): whether it is verified is not known yet."
        }
    }

    static func nonEmpty(_ value: Variant?) -> String? {
        guard let text = value?.stringValue, !text.isEmpty else { return nil }
        return text
    }
}

enum DestinationJSON {
    static func array(_ list: [[String: Variant]]) -> String {
        JSONText.encode(list.map { entry -> [String: Any] in
            [
                "id": entry["id"]?.stringValue ?? "",
                "kind": entry["kind"]?.stringValue ?? "room",
                "name": entry["name"]?.stringValue ?? "",
                "alias": entry["alias"]?.stringValue ?? NSNull(),
                "user_id": entry["user-id"]?.stringValue ?? NSNull(),
                "members": Int(entry["members"]?.uint32Value ?? 0),
                "encrypted": entry["encrypted"]?.boolValue ?? false,
                "last_activity": entry["last-activity"]?.int64Value.map { Timestamp.iso8601(microseconds: $0) } ?? NSNull(),
                "recent": entry["recent"]?.boolValue ?? false,
            ]
        })
    }

    static func table(_ list: [[String: Variant]]) -> String {
        guard !list.isEmpty else { return "No rooms or people match." }
        return list.map { entry in
            let name = SafeDisplay.escaped(entry["name"]?.stringValue ?? "")
            let id = entry["alias"]?.stringValue ?? entry["id"]?.stringValue ?? ""
            var notes: [String] = []
            if entry["recent"]?.boolValue == true { notes.append("recent") }
            if entry["kind"]?.stringValue == "person" { notes.append("new direct chat") }
            if entry["encrypted"]?.boolValue == true { notes.append("end-to-end encrypted") }
            return "\(name)  \(SafeDisplay.escaped(id))" + (notes.isEmpty ? "" : "  (" + notes.joined(separator: ", ") + ")")
        }.joined(separator: "\n")
    }
}

/// Pretty, sorted JSON; an empty array is `[]`.
enum JSONText {
    static func encode(_ value: Any) -> String {
        guard let data = try? JSONSerialization.data(withJSONObject: value, options: [.prettyPrinted, .sortedKeys,
                                                                                     .withoutEscapingSlashes]) else {
            return "null"
        }
        return compactingEmptyArrays(String(decoding: data, as: UTF8.self))
    }

    /// One object on one line: a stream of them reads as JSON Lines.
    static func line(_ value: Any) -> String {
        guard let data = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .withoutEscapingSlashes]) else {
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
               lines[lines.count - 2].hasSuffix("[") {
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
