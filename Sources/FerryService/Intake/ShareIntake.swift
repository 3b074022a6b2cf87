import FerryCore
import FerryOutbox
import FerryStaging

/// The front door: a request becomes a durable, routed share, or a typed error and nothing at all.
///
/// Order matters: check the plan, stage the files, commit the share; only then may the caller
/// acknowledge it. Anything staged for a share that was not committed is removed again.
public final class ShareIntake: Sendable {
    private let outbox: Outbox
    private let stager: Stager
    private let limits: Limits
    /// Whether `userID`'s account is signed in, and the account a share that names none goes out
    /// as (the one signed in last), if any (Share.account).
    private let accounts: ShareIntake.Accounts
    private let clock: @Sendable () -> Int64
    /// Starts uploads while files are still being copied, for shares that go straight to the queue.
    private let uploadAhead: (@Sendable (_ userID: String) -> any UploadAhead)?

    public init(
        outbox: Outbox, stager: Stager, limits: Limits, uploadAhead: (@Sendable (_ userID: String) -> any UploadAhead)?,
        accounts: ShareIntake.Accounts, clock: @escaping @Sendable () -> Int64
    ) {
        self.outbox = outbox
        self.uploadAhead = uploadAhead
        self.stager = stager
        self.limits = limits
        self.accounts = accounts
        self.clock = clock
    }

    /// What the intake asks of the signed-in accounts.
    public struct Accounts: Sendable {
        /// The user id of the account each of these destinations goes out as when the share names
        /// none; empty when nobody is signed in.
        public var choose: @Sendable (_ destinations: [String]) -> [String]
        /// Whether this user id's account is signed in.
        public var isSignedIn: @Sendable (_ userID: String) -> Bool
        /// The account signed in last, if any (a share with no destination yet needs someone).
        public var latest: @Sendable () -> String?

        public init(
            choose: @escaping @Sendable (_ destinations: [String]) -> [String],
            isSignedIn: @escaping @Sendable (_ userID: String) -> Bool,
            latest: @escaping @Sendable () -> String?
        ) {
            self.choose = choose
            self.isSignedIn = isSignedIn
            self.latest = latest
        }
    }

    public func accept(_ request: ShareRequest) throws(ShareError) -> Share {
        let plan = try SharePlan(request: request, limits: limits)
        let now = clock()
        let id = ShareID.make(milliseconds: UInt64(now / 1000))
        // A share for an account that is not signed in waits for that account, and only it; one
        // Ferry never knew would wait for ever (a typing error): refused.
        let chosen =
            request.account.map { user in plan.destinations.map { _ in user } } ?? accounts.choose(plan.destinations)
        let (user, perDestination) = Share.destinationAccounts(chosen)
        let signedIn = (request.account ?? user ?? accounts.latest()).map(accounts.isSignedIn) ?? false
        if let requested = request.account, !signedIn {
            let known: StoredAccount?
            do { known = try outbox.account(userID: requested) } catch {
                throw .storageFailed(.newShare, reason: error.reason)
            }
            if known == nil {
                throw .invalidArgument(
                    // TRANSLATORS: {account} is a Matrix user id.
                    tr("Ferry knows no account {account}; sign in to it first.", ["account": requested]))
            }
        }
        let state = Routing.route(destinations: plan.destinations, signedIn: signedIn)
        // Only a share a person already sent somewhere is uploaded early: nothing reaches the
        // server before someone has chosen where it goes.
        // An upload is on one account's server: a share to several accounts' rooms uploads later.
        let ahead = state == .queued && perDestination.isEmpty ? user.flatMap { uploadAhead?($0) } : nil
        let items: [ShareItem]
        do { items = try stager.stage(plan, shareID: id, ahead: ahead) } catch { throw ShareError(error) }
        let intent = ShareIntent(
            items: items, subject: plan.subject, message: plan.message,
            destinations: plan.destinations, source: plan.source,
            suggestedDestinations: plan.suggestedDestinations)
        let share = Share(
            id: id, intent: intent, state: state, created: now, updated: now,
            account: request.account ?? (state == .queued ? user : nil),
            destinationAccounts: state == .queued ? perDestination : [])
        do throws(OutboxError) {
            try outbox.insert(share)
        } catch {
            ahead?.abandon(shareID: id)
            stager.spool.remove(shareID: id)
            throw .storageFailed(.newShare, reason: error.reason)
        }
        return share
    }
}
