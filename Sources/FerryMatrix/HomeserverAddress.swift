import FerryCore
import Foundation

/// Which homeserver addresses Ferry talks to: https:// anywhere, plain http:// only on this
/// computer (loopback), where nothing crosses a network. Checked before any request is sent,
/// for what a person typed and for what a server's `.well-known` points to.
public enum HomeserverAddress {
    /// The address without a trailing slash, or a `.refused` error saying why not.
    public static func checked(_ text: String) throws(MatrixError) -> String {
        try check(text, query: false)
        return text.hasSuffix("/") ? String(text.dropLast()) : text
    }

    /// Refuses (`.refused`, saying why) an address Ferry sends nothing to: one that is not
    /// https, or plain http to another computer; one with a fragment or credentials, and with a
    /// query unless `query`. The same rule holds for an OAuth 2.0 server's endpoints.
    public static func check(_ text: String, query: Bool) throws(MatrixError) {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
            let host = components.host, !host.isEmpty,
            query || components.query == nil, components.fragment == nil, components.user == nil,
            components.password == nil
        else {
            throw MatrixError(
                kind: .refused,
                message: tr(
                    // TRANSLATORS: a reason, completing "The homeserver {server} cannot be reached: {reason}.";
                    // {address} is what the person typed.
                    "{address} is not a homeserver address (such as https://matrix.example.org)", ["address": text]))
        }
        switch scheme {
        case "https": break
        case "http" where isLoopback(host): break
        case "http":
            throw MatrixError(
                kind: .refused,
                message: tr(
                    // TRANSLATORS: a reason, completing "The homeserver {server} cannot be reached: {reason}.";
                    // {address} is what the person typed.
                    "{address} uses plain http://, which anyone on the network can read and change; Ferry talks to a homeserver on another computer only over https://",
                    ["address": text]))
        default:
            // TRANSLATORS: a reason, completing "The homeserver {server} cannot be reached: {reason}."; {address} is
            // what the person typed.
            throw MatrixError(kind: .refused, message: tr("{address} is not an http(s) address", ["address": text]))
        }
    }

    /// localhost, 127.0.0.0/8 and ::1: this computer.
    static func isLoopback(_ host: String) -> Bool {
        let host = host.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        if host == "localhost" || host == "::1" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }
}
