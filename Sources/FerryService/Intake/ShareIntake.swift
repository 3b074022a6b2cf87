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
    /// Who is signed in, if anyone: a share queued now is sent as them (Share.account).
    private let signedInUser: @Sendable () -> String?
    private let clock: @Sendable () -> Int64
    /// Starts uploads while files are still being copied, for shares that go straight to the queue.
    private let uploadAhead: (@Sendable (_ userID: String) -> any UploadAhead)?

    public init(
        outbox: Outbox, stager: Stager, limits: Limits, uploadAhead: (@Sendable (_ userID: String) -> any UploadAhead)?,
        signedInUser: @escaping @Sendable () -> String?, clock: @escaping @Sendable () -> Int64
    ) {
        self.outbox = outbox
        self.uploadAhead = uploadAhead
        self.stager = stager
        self.limits = limits
        self.signedInUser = signedInUser
        self.clock = clock
    }

    public func accept(_ request: ShareRequest) throws(ShareError) -> Share {
        let plan = try SharePlan(request: request, limits: limits)
        let now = clock()
        let id = ShareID.make(milliseconds: UInt64(now / 1000))
        let user = signedInUser()
        let state = Routing.route(destinations: plan.destinations, signedIn: user != nil)
        // Only a share a person already sent somewhere is uploaded early: nothing reaches the
        // server before someone has chosen where it goes.
        let ahead = state == .queued ? user.flatMap { uploadAhead?($0) } : nil
        let items: [ShareItem]
        do { items = try stager.stage(plan, shareID: id, ahead: ahead) } catch { throw ShareError(error) }
        let intent = ShareIntent(
            items: items, subject: plan.subject, message: plan.message,
            destinations: plan.destinations, source: plan.source,
            suggestedDestinations: plan.suggestedDestinations)
        let share = Share(
            id: id, intent: intent, state: state, created: now, updated: now,
            account: state == .queued ? user : nil)
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
