/// Ferry's version, shown by `ferry --version` and kept in step with packaging.
public enum FerryVersion {
    /// The version, as `major.minor.patch`.
    public static let current = "0.1.0"
}
