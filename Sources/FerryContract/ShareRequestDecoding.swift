import FerryCore
import GLibAdapter

/// Reads `Share(a{sv})` into a `ShareRequest`, checking every known key's type.
///
/// Unknown keys are ignored (and reported back for the log), as xdg-desktop-portal does, so that a
/// newer client can talk to an older service.
public enum ShareRequestDecoding {
    /// The keys `Share` understands, with the D-Bus type each must have.
    public static let keyTypes: [String: String] = [
        "uris": "as", "text": "s", "subject": "s", "message": "s", "destinations": "as",
        "source": "s", "activation-token": "s", "account": "s",
    ]

    public static func decode(
        _ dict: [String: Variant], source: IntakeSource
    ) throws(ShareError)
        -> (request: ShareRequest, unknownKeys: [String])
    {
        for (key, value) in dict {
            if let expected = keyTypes[key], value.typeString != expected {
                throw .invalidArgument(wrongType(key: key, expected: expected, given: value.typeString))
            }
        }
        let request = ShareRequest(
            uris: dict["uris"]?.stringsValue ?? [],
            text: dict["text"]?.stringValue,
            subject: dict["subject"]?.stringValue,
            message: dict["message"]?.stringValue,
            destinations: dict["destinations"]?.stringsValue ?? [],
            // Only the command line may name itself; anything else keeps the real channel.
            source: dict["source"]?.stringValue == IntakeSource.cli.rawValue ? .cli : source,
            account: try Share1Request.account(in: dict))
        return (request, dict.keys.filter { keyTypes[$0] == nil }.sorted())
    }

    /// The sentence for an option of the wrong type; `expected` is "as" or "s".
    private static func wrongType(key: String, expected: String, given: String) -> String {
        if expected == "as" {
            // TRANSLATORS: {key} is the name of an option such as “uris”, {given} a D-Bus type such as “s”; keep “as”
            // as it is.
            return tr("“{key}” must be of type “as” (a list of strings), not “{given}”.", ["key": key, "given": given])
        }
        return tr(
            // TRANSLATORS: {key} is the name of an option such as “text”, {expected} and {given} are D-Bus types such
            // as “s”.
            "“{key}” must be of type “{expected}” (a string), not “{given}”.",
            ["key": key, "expected": expected, "given": given])
    }
}
