import FerryAccount
import FerryCore
import FerryEncryption

/// Verifying Ferry's device by comparing emoji with another of the person's devices: the service
/// side of `ferry verify --emoji` and the dialog's "Use Another Device". The verifier runs it;
/// this maps its failures to Ferry's errors and keeps the device's verification up to date.
extension VerificationService {
    /// Starts an emoji verification with `deviceID`, or with every other device of `account`
    /// (nil: the account signed in last).
    public func startEmojiVerification(
        deviceID: String?, account: String? = nil
    ) async throws(ShareError) -> EmojiVerificationState {
        let session = try session(account)
        do {
            return try await emojiVerifier.begin(session: session, deviceID: deviceID)
        } catch {
            logger.notice("emoji verification could not start", metadata: ["reason": "\(Self.logReason(error))"])
            throw shareError(error, session: session)
        }
    }

    /// The person's answer to the emoji: they match, or they do not (which cancels).
    public func answerEmojiVerification(id: String, match: Bool) async throws(ShareError) -> EmojiVerificationState {
        guard let session = accounts.latest?.current else { throw .notSignedIn }
        do { return try await emojiVerifier.answer(id: id, match: match) } catch {
            throw shareError(error, session: session)
        }
    }

    /// Cancels the emoji verification `id`.
    public func cancelEmojiVerification(id: String) async throws(ShareError) -> EmojiVerificationState {
        guard let session = accounts.latest?.current else { throw .notSignedIn }
        do { return try await emojiVerifier.cancel(id: id) } catch { throw shareError(error, session: session) }
    }

    /// The emoji verification running or last ended, if any.
    public func emojiVerification() async -> EmojiVerificationState? {
        await emojiVerifier.current
    }

    /// Each change of a verification: announced, and once done the device's verification kept.
    func emojiVerificationChanged(_ state: EmojiVerificationState) {
        if let verification = state.verification, let session = accounts.account(state.userID)?.current {
            remember(verification, for: session, answered: .now)
        }
        announcements.value(.emojiVerificationChanged(state))
    }
}
