/// Where Ferry keeps its data, from the XDG base directory variables (and their defaults).
public struct FerryPaths: Equatable, Sendable {
    /// `$XDG_STATE_HOME/ferry`: the outbox and the spool, private to the user (0700).
    public let stateDirectory: String
    /// `$XDG_CONFIG_HOME/ferry`: settings.
    public let configDirectory: String
    /// `$XDG_CACHE_HOME/ferry`: what can be fetched again (people's and rooms' pictures).
    public let cacheDirectory: String

    /// The directories from `environment`'s XDG variables and HOME; a relative XDG value is ignored, as the spec says.
    public init(environment: [String: String]) {
        let home = environment["HOME"] ?? "/"
        func base(_ variable: String, _ fallback: String) -> String {
            // The spec says relative values are invalid and must be ignored.
            if let value = environment[variable], value.hasPrefix("/") { return value }
            return home + "/" + fallback
        }
        stateDirectory = base("XDG_STATE_HOME", ".local/state") + "/ferry"
        configDirectory = base("XDG_CONFIG_HOME", ".config") + "/ferry"
        cacheDirectory = base("XDG_CACHE_HOME", ".cache") + "/ferry"
    }

    /// The outbox's SQLite file.
    public var database: String { stateDirectory + "/ferry.sqlite3" }
    /// The spool: each share's staged copies, in a folder named by its id.
    public var spool: String { stateDirectory + "/spool" }
}
