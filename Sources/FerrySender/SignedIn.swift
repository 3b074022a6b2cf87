import FerryMatrix
import FerryCore

/// The sessions signed in at the start of a pass over the queue, by user id: which one takes
/// a share up, and which one each of its deliveries goes out as.
struct SignedIn {
    /// Each signed-in account's session, by user id.
    let sessions: [String: Session]
    /// The account signed in last: a share of no account (an older Ferry's) goes out as it.
    let latest: String?
    /// Each account's sign-in number, under which its deliveries begin (Delivery.signIn).
    let signIns: [String: Int64]

    init(sessions list: [Session]) {
        sessions = Dictionary(list.map { ($0.userID, $0) }, uniquingKeysWith: { first, _ in first })
        latest = list.first?.userID
        signIns = sessions.mapValues(\.signIn)
    }

    /// The session that takes `share` up: the first of its accounts that is signed in (a share to
    /// the rooms of several accounts goes on while any of them is), or the one signed in last
    /// for a share of no account. Nil when none of its accounts is signed in.
    func takingUp(_ share: Share) -> Session? {
        guard share.account != nil else { return latest.flatMap { sessions[$0] } }
        return share.accounts.lazy.compactMap { sessions[$0] }.first
    }
}
