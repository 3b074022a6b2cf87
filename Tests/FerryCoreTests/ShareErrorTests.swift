import FerryCore
import XCTest

/// Ferry's errors: stable D-Bus names that match the interface document, sentences that name the
/// bad item safely, and exit codes that match the command line contract.
final class ShareErrorTests: XCTestCase {
    /// One example of every case. `caseName(of:)` below switches without a default, so a new case
    /// does not compile until it is listed there — and then the count check asks for an example here.
    static let everyError: [ShareError] = [
        .invalidArgument("Keys that cannot go together."),
        .emptyShare,
        .tooManyItems(count: 10_000, limit: 1000),
        .fileNotFound("/home/me/missing.png"),
        .danglingSymlink("/home/me/dangling.png"),
        .symlinkLoop("/home/me/loop.png"),
        .isDirectory("/home/me/Pictures"),
        .notRegularFile("/home/me/fifo", kind: .fifo),
        .permissionDenied("/home/me/secret.png"),
        .emptyFile("/home/me/empty.txt"),
        .fileTooLarge("/home/me/huge.iso", size: 5_000_000_000, limit: 4 << 30),
        .emptyText,
        .textTooLong(field: .subject, bytes: 2000, limit: 1024),
        .invalidURI("ferry:other", reason: "Ferry knows only ferry:share?…"),
        .unsupportedScheme("mailto:x", scheme: "mailto"),
        .remoteHost("file://otherhost/x", host: "otherhost"),
        .remoteReadFailed("sftp://host/x", reason: "Connection refused"),
        .invalidDestination("#alias"),
        .stagingFailed("/home/me/a.png", reason: "No space left on device"),
        .storageFailed(.newShare, reason: "database or disk is full"),
        .notEnoughSpace(needed: 3_000_000_000, reserve: 64 << 20, available: 1_000_000_000),
        .noSuchShare("01jabcdefghjkmnpqrstvwxyz0"),
        .notCancellable("01jabcdefghjkmnpqrstvwxyz0", state: .sent),
        .tooLateToCancel("01jabcdefghjkmnpqrstvwxyz0", destinations: ["!room:example.org"]),
        .notRetryable("01jabcdefghjkmnpqrstvwxyz0", state: .sent),
        .notCompletable("01jabcdefghjkmnpqrstvwxyz0", state: .queued),
        .notSignedIn,
        .signInFailed("The homeserver did not accept this user name and password."),
        .homeserverUnreachable("example.org", reason: "Connection refused"),
        .unsupportedLogin("example.org", method: .password),
        .signInInProgress,
        .invalidRecoveryKey("That recovery key has a typo: its check digit does not match."),
        .wrongRecoveryKey(passphrase: false),
        .wrongRecoveryKey(passphrase: true),
        .cannotVerify("the account has no cross-signing identity yet"),
        .passwordRequired(.setUpCrossSigning),
        .encryptedRoom("!secret", reason: "no way to encrypt"),
        .forbidden("!room", reason: "You are not in this room"),
        .roomNotFound("#gone:example.org"),
        .fileTooLargeForServer("movie.mkv", size: 200_000_000, limit: 100_000_000),
        .stagedCopyLost("photo.png", reason: "it was removed from Ferry's spool"),
        .deliveryFailed("!room", reason: "M_UNKNOWN"),
    ]

    private static func caseName(of error: ShareError) -> String {
        switch error {
        case .invalidArgument: return "invalidArgument"
        case .emptyShare: return "emptyShare"
        case .tooManyItems: return "tooManyItems"
        case .fileNotFound: return "fileNotFound"
        case .danglingSymlink: return "danglingSymlink"
        case .symlinkLoop: return "symlinkLoop"
        case .isDirectory: return "isDirectory"
        case .notRegularFile: return "notRegularFile"
        case .permissionDenied: return "permissionDenied"
        case .emptyFile: return "emptyFile"
        case .fileTooLarge: return "fileTooLarge"
        case .emptyText: return "emptyText"
        case .textTooLong: return "textTooLong"
        case .invalidURI: return "invalidURI"
        case .unsupportedScheme: return "unsupportedScheme"
        case .remoteHost: return "remoteHost"
        case .remoteReadFailed: return "remoteReadFailed"
        case .invalidDestination: return "invalidDestination"
        case .stagingFailed: return "stagingFailed"
        case .storageFailed: return "storageFailed"
        case .notEnoughSpace: return "notEnoughSpace"
        case .noSuchShare: return "noSuchShare"
        case .notCancellable: return "notCancellable"
        case .tooLateToCancel: return "tooLateToCancel"
        case .notRetryable: return "notRetryable"
        case .notCompletable: return "notCompletable"
        case .notSignedIn: return "notSignedIn"
        case .signInFailed: return "signInFailed"
        case .homeserverUnreachable: return "homeserverUnreachable"
        case .unsupportedLogin: return "unsupportedLogin"
        case .signInInProgress: return "signInInProgress"
        case .invalidRecoveryKey: return "invalidRecoveryKey"
        case .wrongRecoveryKey: return "wrongRecoveryKey"
        case .cannotVerify: return "cannotVerify"
        case .passwordRequired: return "passwordRequired"
        case .encryptedRoom: return "encryptedRoom"
        case .forbidden: return "forbidden"
        case .roomNotFound: return "roomNotFound"
        case .fileTooLargeForServer: return "fileTooLargeForServer"
        case .stagedCopyLost: return "stagedCopyLost"
        case .deliveryFailed: return "deliveryFailed"
        }
    }
    private static let caseCount = 41

    func testTheExamplesCoverEveryCase() {
        XCTAssertEqual(Set(Self.everyError.map(Self.caseName)).count, Self.caseCount)
    }

    func testEveryErrorNameIsUnderFerrysPrefix() {
        for error in Self.everyError {
            XCTAssertEqual(error.name, "io.github.ferryshare.Ferry.Error." + error.shortName)
            XCTAssertTrue(error.name.hasPrefix(ShareError.namePrefix))
        }
    }

    func testShortNamesAreExactlyTheOnesTheInterfaceDocuments() throws {
        let documented = try InterfaceDocument.errorNames()

        XCTAssertEqual(documented.count, Self.caseCount, "parsed from the XML: \(documented.sorted())")
        XCTAssertEqual(Set(Self.everyError.map(\.shortName)), documented)
    }

    func testExitCodesAreTheOnesTheContractGives() throws {
        let contract = try ContractDocument.exitCodesByErrorName()

        for error in Self.everyError {
            XCTAssertEqual(error.exitCode, contract[error.shortName], "\(error.shortName) in docs/CONTRACT.md")
        }
    }

    func testEveryDocumentedErrorHasAnExitCodeInTheContract() throws {
        let contract = try ContractDocument.exitCodesByErrorName()

        XCTAssertEqual(Set(contract.keys), try InterfaceDocument.errorNames())
    }

    func testBusErrorsMeanTheServiceIsUnavailable() {
        XCTAssertEqual(ExitStatus.forErrorName("org.freedesktop.DBus.Error.ServiceUnknown"), 69)
        XCTAssertEqual(ExitStatus.forErrorName("org.freedesktop.DBus.Error.NoReply"), ExitStatus.unavailable)
    }

    func testUnknownErrorNamesAreInternalErrors() {
        XCTAssertEqual(ExitStatus.forErrorName("com.example.Broken"), 70)
        XCTAssertEqual(ExitStatus.forErrorName(ShareError.namePrefix + "SomethingNew"), ExitStatus.software)
    }

    func testMessagesNameTheBadItem() {
        let items: [(ShareError, String)] = [
            (.fileNotFound("/home/me/missing.png"), "/home/me/missing.png"),
            (.danglingSymlink("/d/link"), "/d/link"),
            (.symlinkLoop("/d/loop"), "/d/loop"),
            (.isDirectory("/home/me/Pictures"), "/home/me/Pictures"),
            (.notRegularFile("/tmp/fifo", kind: .fifo), "/tmp/fifo"),
            (.permissionDenied("/root/x"), "/root/x"),
            (.emptyFile("/tmp/empty"), "/tmp/empty"),
            (.fileTooLarge("/tmp/huge", size: 11, limit: 10), "/tmp/huge"),
            (.textTooLong(field: .subject, bytes: 5, limit: 4), "subject"),
            (.invalidURI("ferry:other", reason: "r"), "ferry:other"),
            (.unsupportedScheme("mailto:x", scheme: "mailto"), "mailto:x"),
            (.remoteHost("file://otherhost/x", host: "otherhost"), "otherhost"),
            (.remoteReadFailed("sftp://h/x", reason: "r"), "sftp://h/x"),
            (.invalidDestination("#alias"), "#alias"),
            (.stagingFailed("/tmp/a", reason: "r"), "/tmp/a"),
            (.noSuchShare("abc"), "abc"),
            (.notCancellable("abc", state: .sent), "sent"),
            (.tooManyItems(count: 1001, limit: 1000), "1001"),
        ]
        for (error, item) in items {
            XCTAssertTrue(error.message.contains(item), "\(error.shortName): \(error.message)")
        }
    }

    func testMessagesShowControlAndBidiCharactersInNamesEscaped() {
        let error = ShareError.fileNotFound("/tmp/evil\n\u{202E}gnp.exe")

        XCTAssertFalse(error.message.contains("\n"))
        XCTAssertFalse(error.message.unicodeScalars.contains("\u{202E}"))
        XCTAssertTrue(error.message.contains("/tmp/evil\\n\\u{202E}gnp.exe"), error.message)
    }

    func testEveryMessageIsASentence() {
        for error in Self.everyError {
            XCTAssertFalse(error.message.isEmpty, error.shortName)
            XCTAssertTrue(error.message.hasSuffix("."), "\(error.shortName): \(error.message)")
        }
    }

    func testSizesInTheTooLargeMessageAreForPeople() {
        let message = ShareError.fileTooLarge("/a", size: 5_000_000_000, limit: 4 << 30).message

        XCTAssertTrue(message.contains("5 GB") && message.contains("4.3 GB"), message)
    }
}
