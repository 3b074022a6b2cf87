import FerryAccount
import FerryCore
import FerryEncryption
import FerryMatrix

import Logging
import Synchronization

/// What the service does for the device's verification: whether the account's owner vouches for
/// Ferry's device, verifying it with the account's recovery key or by comparing emoji, and
/// setting up cross-signing. The answer is the server's (cross-signing signatures on the
/// device's keys); the last one for this device is kept, to show without asking again.
public final class VerificationService: Sendable {
    /// The device verified is the one of the account a call speaks as (the one signed in last).
    let accounts: Accounts
    /// Each account's encryption; the device verified is the account's own.
    let encryptions: AccountEncryptions
    /// Emoji verification with another of the person's devices; its changes come through
    /// `emojiVerifier.changes` (ShareService.listen hands them to `emojiVerificationChanged`).
    let emojiVerifier: EmojiVerifier
    let announcements: WiredLater<@Sendable (ServiceEvent) -> Void>
    let logger: Logger
    /// Each signed-in device's verification as the server last said, by user id.
    private let kept = Mutex<[String: VerificationState]>([:])

    init(
        accounts: Accounts, encryptions: AccountEncryptions, emojiVerifier: EmojiVerifier,
        announcements: WiredLater<@Sendable (ServiceEvent) -> Void>, logger: Logger
    ) {
        self.accounts = accounts
        self.encryptions = encryptions
        self.emojiVerifier = emojiVerifier
        self.announcements = announcements
        self.logger = logger
    }

    /// The last known verification of `session`'s device (nil: the account signed in last's);
    /// nil when nobody is signed in or it was not asked yet.
    public func deviceVerification(of session: Session? = nil) -> DeviceVerification? {
        guard let session = session ?? accounts.latest?.current else { return nil }
        return kept.withLock { kept in
            kept[session.userID].flatMap { $0.deviceID == session.deviceID ? $0.state : nil }
        }
    }

    /// The session of `account` (nil: the account signed in last), which must be signed in.
    func session(_ account: String?) throws(ShareError) -> Session {
        guard let session = accounts.speaking(as: account)?.current else { throw .notSignedIn }
        return session
    }

    /// Verifies Ferry's device with the recovery key or passphrase; nothing of either is kept.
    public func verifyDevice(
        _ secret: VerificationSecret, account: String? = nil
    ) async throws(ShareError) -> DeviceVerification {
        let session = try session(account)
        do {
            let state = try await encryptions.of(session.userID).verifyDevice(session: session, with: secret)
            remember(state, for: session, answered: .now)
            return state
        } catch {
            logger.notice("verifying this device failed", metadata: ["reason": "\(Self.logReason(error))"])
            throw shareError(error, session: session)
        }
    }

    /// Sets up a cross-signing identity and secret storage for an account that has none, and
    /// verifies this device with it; the recovery key is returned once, for the person to keep.
    public func setUpCrossSigning(
        password: String?, account: String? = nil
    ) async throws(ShareError) -> CrossSigningSetup {
        let session = try session(account)
        do {
            let setup = try await encryptions.of(session.userID).setUpCrossSigning(session: session, password: password)
            remember(setup.verification, for: session, answered: .now)
            return setup
        } catch {
            logger.notice("setting up cross-signing failed", metadata: ["reason": "\(Self.logReason(error))"])
            throw shareError(error, session: session)
        }
    }

    /// Asks the server again about `userID`'s device (nil: the account signed in last's), after a
    /// sign-in, or when a client wants the status and the answer is not known yet; a failure
    /// leaves the last answer.
    @discardableResult
    func refresh(_ userID: String? = nil) async -> DeviceVerification? {
        guard let session = accounts.speaking(as: userID)?.current else { return nil }
        let asked = ContinuousClock.now
        do {
            let state = try await encryptions.of(session.userID).verification(of: session)
            remember(state, for: session, answered: asked)
            return state
        } catch {
            logger.notice(
                "asking whether this device is verified failed", metadata: ["reason": "\(error.matrixError.message)"])
            return deviceVerification(of: session)
        }
    }

    /// Whether the server was asked less than two seconds ago: a client that polls the status
    /// makes one question per two seconds at most.
    var askedRecently: Bool {
        guard let user = accounts.latest?.userID else { return false }
        return kept.withLock { kept in kept[user].map { ContinuousClock.now - $0.answered < .seconds(2) } ?? false }
    }

    /// Keeps the server's answer, unless a newer one is kept already (a status asked before a
    /// verification must not bring "unverified" back after it).
    func remember(_ state: DeviceVerification, for session: Session, answered: ContinuousClock.Instant) {
        let changed = kept.withLock { kept -> Bool in
            let last = kept[session.userID]
            let same = last?.deviceID == session.deviceID
            if same, let last, last.answered > answered { return false }
            kept[session.userID] = VerificationState(deviceID: session.deviceID, state: state, answered: answered)
            return !same || last?.state != state
        }
        if changed { announcements.value(.accountChanged) }
    }

    func shareError(_ failure: VerificationFailure, session: Session) -> ShareError {
        switch failure {
        case .invalidRecoveryKey(let problem): return .invalidRecoveryKey(problem.sentence)
        case .wrongKey(let passphrase): return .wrongRecoveryKey(passphrase: passphrase)
        case .noPassphrase:
            return .cannotVerify(
                // TRANSLATORS: completes "This device cannot be verified this way: {reason}."
                tr("the account's secret storage was not set up with a passphrase; use the recovery key"))
        case .noCrossSigning:
            return .cannotVerify(
                // TRANSLATORS: completes "This device cannot be verified this way: {reason}."
                tr("the account has no cross-signing identity yet; set it up in a Matrix client such as Element first"))
        case .notInSecretStorage:
            return .cannotVerify(
                tr(
                    // TRANSLATORS: completes "This device cannot be verified this way: {reason}."
                    "the account's secret storage does not hold its self-signing key; verify from another of your devices instead"
                ))
        case .staleSecret:
            return .cannotVerify(
                tr(
                    // TRANSLATORS: completes "This device cannot be verified this way: {reason}."
                    "the self-signing key in secret storage is not the one the account uses now (its identity was reset elsewhere)"
                ))
        case .masterKeyMismatch:
            return .cannotVerify(
                tr(
                    // TRANSLATORS: completes "This device cannot be verified this way: {reason}."
                    "the master key in secret storage is not the one the homeserver lists (the identity was reset elsewhere, or the homeserver lists a key of its own)"
                ))
        case .unreadable(let what):
            // TRANSLATORS: completes "This device cannot be verified this way: {reason}."; {what} is what could not be
            // read, such as "the stored self-signing key".
            return .cannotVerify(tr("Ferry cannot read the account's secret storage ({what})", ["what": what]))
        case .encryption(let failure): return shareError(failure.matrixError, session: session)
        case .server(let error): return shareError(error, session: session)
        case .alreadySetUp:
            return .cannotVerify(
                // TRANSLATORS: completes "This device cannot be verified this way: {reason}."
                tr("the account has a cross-signing identity already; verify this device with its recovery key instead")
            )
        case .secretStorageExists:
            return .cannotVerify(
                tr(
                    // TRANSLATORS: completes "This device cannot be verified this way: {reason}."
                    "the account has secret storage already, without a cross-signing identity; set it up in the client that made the storage"
                ))
        // Not translated here: ShareError.message chooses its whole translated sentence by this English name.
        case .passwordNeeded: return .passwordRequired(.setUpCrossSigning)
        case .otherAuthNeeded:
            return .cannotVerify(
                tr(
                    // TRANSLATORS: completes "This device cannot be verified this way: {reason}."
                    "the homeserver asks for another confirmation than a password; set up cross-signing in its own client"
                ))
        case .busy:
            // TRANSLATORS: completes "This device cannot be verified this way: {reason}."
            return .cannotVerify(tr("another verification of this device is under way; wait for it to finish"))
        case .wrongPassword: return .signInFailed(tr("The homeserver refused the password; nothing was set up."))
        case .noOtherDevice:
            return .cannotVerify(
                tr(
                    // TRANSLATORS: completes "This device cannot be verified this way: {reason}."
                    "your account has no other device to compare emoji with; sign in to a Matrix client such as Element first, or use the recovery key"
                ))
        case .unknownDevice:
            return .cannotVerify(
                tr(
                    // TRANSLATORS: completes "This device cannot be verified this way: {reason}."; "ferry verify
                    // --emoji" and "--device" are a command and its option, typed as they are.
                    "that device is not one of your account's devices (ferry verify --emoji without --device asks them all)"
                ))
        case .noSuchVerification:
            // TRANSLATORS: completes "This device cannot be verified this way: {reason}."
            return .cannotVerify(tr("no emoji verification with that id is running"))
        case .notComparing:
            // TRANSLATORS: completes "This device cannot be verified this way: {reason}."
            return .cannotVerify(tr("the emoji are not there to compare yet"))
        }
    }

    private func shareError(_ error: MatrixError, session: Session) -> ShareError {
        if error.isUnknownToken {
            accounts.invalidate(token: session.accessToken)
            return .notSignedIn
        }
        if error.isTransient { return .homeserverUnreachable(session.homeserver, reason: error.message) }
        // TRANSLATORS: completes "This device cannot be verified this way: {reason}."; {reason} is the homeserver's own
        // words, often in English.
        return .cannotVerify(tr("the homeserver refused: {reason}", ["reason": error.message]))
    }

    /// What the log may say: the kind of failure, never anything of the secret.
    static func logReason(_ failure: VerificationFailure) -> String {
        switch failure {
        case .invalidRecoveryKey: return "not a recovery key"
        case .wrongKey: return "wrong key"
        case .noPassphrase: return "no passphrase"
        case .noCrossSigning: return "no cross-signing"
        case .notInSecretStorage: return "not in secret storage"
        case .staleSecret: return "stale secret"
        case .masterKeyMismatch: return "master key mismatch"
        case .unreadable(let what): return "unreadable: \(what)"
        case .encryption(let failure): return failure.matrixError.message
        case .server(let error): return error.description
        case .alreadySetUp: return "already set up"
        case .secretStorageExists: return "secret storage exists"
        case .passwordNeeded: return "password needed"
        case .wrongPassword: return "wrong password"
        case .otherAuthNeeded: return "other auth needed"
        case .busy: return "busy"
        case .noOtherDevice: return "no other device"
        case .unknownDevice: return "unknown device"
        case .noSuchVerification: return "no such verification"
        case .notComparing: return "not comparing"
        }
    }
}

/// A signed-in device's verification as the server last said, and when it was asked.
struct VerificationState {
    var deviceID = ""
    var state: DeviceVerification?
    var answered = ContinuousClock.Instant.now - .seconds(3600)
}
