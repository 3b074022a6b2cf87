import FerryCore
import Testing
@testable import FerryService

/// The service's settings come from its environment, once; nonsense there gives the defaults or
/// the nearest sensible value, never a service that cannot start.
struct ServiceSettingsTests {
    @Test func anEmptyEnvironmentGivesTheDefaults() {
        let settings = ServiceSettings(environment: [:])
        #expect(settings.idleTimeout == 10)
        #expect(settings.logLevel == .info)
        #expect(!settings.onlyVerifiedDevices)
        #expect(settings.verificationTimeLimit == .seconds(600))
        #expect(settings.backoff.maximum == Backoff().maximum)
    }

    @Test func eachSettingIsReadAndKeptWithinItsBounds() {
        let settings = ServiceSettings(environment: [
            "FERRY_IDLE_TIMEOUT": "30", "FERRY_LOG": "DEBUG", "FERRY_ONLY_VERIFIED_DEVICES": "Yes",
            "FERRY_VERIFICATION_TIMEOUT_SECONDS": "100000", "FERRY_RETRY_MAX_SECONDS": "2",
        ])
        #expect(settings.idleTimeout == 30)
        #expect(settings.logLevel == .debug)
        #expect(settings.onlyVerifiedDevices)
        #expect(settings.verificationTimeLimit == .seconds(600), "the spec's ten minutes at most")
        #expect(settings.backoff.maximum == 2_000_000)
        #expect(settings.backoff.initial <= settings.backoff.maximum)
        #expect(
            ServiceSettings(environment: ["FERRY_VERIFICATION_TIMEOUT_SECONDS": "0"]).verificationTimeLimit
                == .seconds(1))
    }

    @Test func nonsenseIsIgnored() {
        let settings = ServiceSettings(environment: [
            "FERRY_IDLE_TIMEOUT": "soon", "FERRY_LOG": "loud",
            "FERRY_RETRY_MAX_SECONDS": "-5",
        ])
        #expect(settings.idleTimeout == 10)
        #expect(settings.logLevel == .info)
        #expect(settings.backoff.maximum == Backoff().maximum)
        #expect(ServiceSettings(environment: [:], idleTimeoutOverride: 0).idleTimeout == 0)
    }
}
