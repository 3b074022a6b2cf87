import FerryAccount
import FerryMatrix

/// Where the sender learns who is signed in: the accounts in the service, fixed sessions in tests.
/// A share goes out as its own account's session, never another's.
public protocol SessionSource: Sendable {
    /// Returns once every stored sign-in's token has been read (they are read in the background at a start).
    func tokenRead() async
    /// Every signed-in session (waits for stored tokens to be read), the last signed in first.
    var sessions: [Session] { get }
    /// The session of `userID`'s account, if it is signed in (waits for its stored token).
    func session(of userID: String) -> Session?
    /// The session of `userID`'s account, if it is signed in and its token already read: never waits.
    func sessionIfRead(of userID: String) -> Session?
    /// The homeserver no longer takes `token`: its account must sign in again.
    func invalidate(token: String)
}

extension Accounts: SessionSource {
    public var sessions: [Session] { signedIn.compactMap(\.current) }
    public func session(of userID: String) -> Session? { account(userID)?.current }
    public func sessionIfRead(of userID: String) -> Session? { account(userID)?.currentIfRead }
}
