import FerryAccount
import FerryContract
import FerryCore
import FerryEncryption
import FerryMatrix
import Logging

/// What the service does for the accounts: signing in and out, the ways a homeserver offers to
/// sign in, and the status `GetStatus` answers. Each account's device keys follow its sign-in
/// (made at sign-in, deleted at sign-out); what a sign-in does to shares is the shares' own
/// (`ShareService.signedIn(as:)`, `signedOut(_:)`), asked of them here.
public final class AccountService: Sendable {
    let accounts: Accounts
    let shares: ShareService
    /// Each account's encryption: its device is made at sign-in and deleted at sign-out.
    let encryptions: AccountEncryptions
    let verification: VerificationService
    let announcements: WiredLater<@Sendable (ServiceEvent) -> Void>
    let logger: Logger

    init(
        accounts: Accounts, shares: ShareService, encryptions: AccountEncryptions, verification: VerificationService,
        announcements: WiredLater<@Sendable (ServiceEvent) -> Void>, logger: Logger
    ) {
        self.accounts = accounts
        self.shares = shares
        self.encryptions = encryptions
        self.verification = verification
        self.announcements = announcements
        self.logger = logger
    }

    /// Signs in, adding an account (or the same one again); every share that waited for this
    /// person moves on by itself. Other accounts stay signed in.
    public func signIn(_ credentials: Credentials) async throws(ShareError) -> Session {
        let session: Session
        do throws(SignInError) {
            session = try await accounts.signIn(credentials)
        } catch {
            throw ShareError(error)
        }
        prepareDevice(session)
        await shares.signedIn(as: session.userID)
        announcements.value(.accountChanged)
        return session
    }

    /// Signs `userID`'s account (nil: the one signed in last) out here and at the server; its
    /// device's keys go, and its queued shares wait for its next sign-in. Other accounts stay.
    public func signOut(_ userID: String?) async throws(ShareError) {
        let account: Account
        if let userID {
            guard let named = accounts.account(userID) else { throw .notSignedIn }
            account = named
        } else {
            // Nobody signed in: signing out asks nothing of anyone.
            guard let latest = accounts.latest else { return }
            account = latest
        }
        await account.signOut(remote: true)
        await encryptions.of(account.userID).forget(userID: account.userID)
        await shares.signedOut(account.userID)
        announcements.value(.accountChanged)
    }

    /// The device's identity made and its keys uploaded, in the background: a sign-in answers at
    /// once, and a failure here is tried again before the first encrypted event. Then whether
    /// the owner verified it (a device signed in again under its id may be).
    private func prepareDevice(_ session: Session) {
        let (encryption, verification, logger) = (encryptions.of(session.userID), verification, logger)
        Task {
            do throws(EncryptionFailure) {
                try await encryption.prepareDevice(for: session)
                await verification.refresh(session.userID)
            } catch {
                logger.warning(
                    "the device's encryption keys could not be uploaded yet",
                    metadata: ["error": "\(error.matrixError.message)"])
            }
        }
    }

    /// The ways `homeserver` offers to sign in, as `GetLoginFlows` answers them.
    public func loginFlows(homeserver: String) async throws(ShareError) -> FerryContract.LoginFlows {
        do {
            let url = try await FerryMatrix.SignIn.discover(homeserver)
            return AccountCodec.report(try await FerryMatrix.SignIn.flows(MatrixHTTP(baseURL: url)))
        } catch {
            // A server that answers as something else is said as a sign-in says it.
            let words = error.kind == .transport || error.kind == .refused ? error.message : nil
            throw ShareError(SignInError.unreachable(homeserver: homeserver, reason: words))
        }
    }

    /// The status, with the device's verification asked afresh (it changes elsewhere: another
    /// device verifies this one, or the account's identity is reset) unless it was asked in the
    /// last two seconds, waiting three seconds at most; offline, or when the server is slow, the
    /// last answer stands.
    public func statusAskingVerification() async -> StatusReport {
        if accounts.latest?.current != nil, shares.online,
            !verification.askedRecently || verification.deviceVerification() == nil
        {
            let refresh = Task { await verification.refresh() }
            let timer = Task {
                // Cancelled when the answer came first: nothing to wait for then.
                try? await Task.sleep(for: .seconds(3))
                refresh.cancel()
            }
            _ = await refresh.value
            timer.cancel()
        }
        return status()
    }

    /// Everything `ferry status` shows, as `GetStatus` answers it.
    public func status() -> StatusReport {
        let latest = accounts.latest
        let session = latest?.current
        let verified = verification.deviceVerification()?.rawValue
        let listed = accounts.signedIn.compactMap(\.current).map {
            AccountListing(
                userID: $0.userID, homeserver: $0.homeserver, deviceID: $0.deviceID,
                deviceVerification: verification.deviceVerification(of: $0)?.rawValue, online: shares.online)
        }
        return StatusReport(
            signedIn: session != nil, userID: session?.userID, homeserver: session?.homeserver,
            online: shares.online, secretStorage: latest?.secretStorage, deviceID: session?.deviceID,
            deviceVerification: verified, shares: shares.countsByState(), accounts: listed)
    }
}
