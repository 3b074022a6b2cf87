/// The type of a share as a whole: the common supertype of its items, as Android computes an
/// ACTION_SEND_MULTIPLE intent's type ("image/png" + "image/jpeg" → "image/*"; mixed → "*/*").
public enum ContentTypeFamily {
    /// The narrowest type covering every one of `types`: the type itself, "major/*", or "*/*" (also for none).
    public static func commonType(of types: [String]) -> String {
        guard let first = types.first else { return "*/*" }
        if types.allSatisfy({ $0 == first }) { return first }
        let major = first.split(separator: "/").first.map(String.init) ?? ""
        if !major.isEmpty, types.allSatisfy({ $0.split(separator: "/").first.map(String.init) == major }) {
            return major + "/*"
        }
        return "*/*"
    }
}
