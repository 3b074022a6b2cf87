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
        "source": "s", "activation-token": "s",
    ]

    public static func decode(_ dict: [String: Variant], source: IntakeSource) throws(ShareError)
        -> (request: ShareRequest, unknownKeys: [String]) {
        for (key, value) in dict {
            if let expected = keyTypes[key], value.typeString != expected {
                throw .invalidArgument("\u{201C}\(key)\u{201D} must be of type \u{201C}\(expected)\u{201D} (\(describe(expected))), not \u{201C}\(value.typeString)\u{201D}.")
            }
        }
        let request = ShareRequest(
            uris: dict["uris"]?.stringsValue ?? [],
            text: dict["text"]?.stringValue,
            subject: dict["subject"]?.stringValue,
            message: dict["message"]?.stringValue,
            destinations: dict["destinations"]?.stringsValue ?? [],
            // Only the command line may name itself; anything else keeps the real channel.
            source: dict["source"]?.stringValue == IntakeSource.cli.rawValue ? .cli : source)
        return (request, dict.keys.filter { keyTypes[$0] == nil }.sorted())
    }

    private static func describe(_ type: String) -> String {
        type == "as" ? "a list of strings" : "a string"
    }
}
