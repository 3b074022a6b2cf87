import FerryAccount
import FerryMatrix

/// Where the sender learns who is signed in: the account in the service, a fixed session in tests.
public protocol SessionSource: Sendable {
    /// Returns once the stored sign-in's token has been read (it is read in the background at a start).
    func tokenRead() async
    /// The signed-in session, if any (waits for the stored token to be read).
    var current: Session? { get }
    /// The signed-in session, if any and already read: never waits.
    var currentIfRead: Session? { get }
    /// The homeserver no longer takes `token`: the person must sign in again.
    func invalidate(token: String)
}

extension Account: SessionSource {}
