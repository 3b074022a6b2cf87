import FerryCore
import Logging

/// The service's settings, read once at start from its environment (which, under D-Bus
/// activation, is the bus daemon's, not the caller's).
public struct ServiceSettings: Sendable {
    public var paths: FerryPaths
    public var limits: Limits
    /// Seconds the service stays up with nothing to do.
    public var idleTimeout: UInt32
    public var logLevel: Logger.Level
    /// How long the sender waits between tries of a delivery that failed for a passing reason.
    public var backoff: Backoff

    /// Room keys only for devices their owners verified (`FERRY_ONLY_VERIFIED_DEVICES=1`).
    public var onlyVerifiedDevices: Bool

    /// How long an emoji verification may take in all: ten minutes, as the spec says
    /// (`FERRY_VERIFICATION_TIMEOUT_SECONDS`, for tests of the time-out).
    public var verificationTimeLimit: Duration

    /// The service's environment, passed on to the dialog process (DISPLAY, the bus, XDG directories).
    public var environment: [String: String]

    public init(environment: [String: String], idleTimeoutOverride: UInt32? = nil) {
        self.environment = environment
        paths = FerryPaths(environment: environment)
        limits = Limits.fromEnvironment(environment)
        idleTimeout = idleTimeoutOverride ?? environment["FERRY_IDLE_TIMEOUT"].flatMap(UInt32.init) ?? 10
        logLevel = Self.logLevel(environment["FERRY_LOG"])
        onlyVerifiedDevices = ["1", "true", "yes"].contains(
            environment["FERRY_ONLY_VERIFIED_DEVICES"]?.lowercased() ?? "")
        verificationTimeLimit = .seconds(
            environment["FERRY_VERIFICATION_TIMEOUT_SECONDS"].flatMap(Int64.init).map { min(max($0, 1), 600) } ?? 600)
        backoff = Backoff()
        if let seconds = environment["FERRY_RETRY_MAX_SECONDS"].flatMap(Int64.init), seconds > 0 {
            backoff.maximum = seconds * 1_000_000
            backoff.initial = min(backoff.initial, backoff.maximum)
        }
    }

    public static func logLevel(_ text: String?) -> Logger.Level {
        text.flatMap { Logger.Level(rawValue: $0.lowercased()) } ?? .info
    }
}
