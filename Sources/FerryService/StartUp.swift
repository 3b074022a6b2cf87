import Dispatch
import FerryCore
import GLibAdapter
import Synchronization

/// The part of a start that committing a share does not need — the crash notes, the outbox through
/// GRDB, the sender, and the announcements of the shares accepted meanwhile — run once, after the
/// first reply: a cold `gio open` is answered as soon as its share is committed (issue 19).
///
/// It runs on the main loop at the first of: `afterReply` after a Share or Open call is answered; a
/// call of any other method, which waits for it (what that call reads or changes then comes after
/// every announcement of the shares accepted before, as it did when they were announced before the
/// reply); or `fallback` after the start, for an activation without a share (Activate, the login autostart).
/// A share being staged at that moment (a large or remote file) holds it back until its reply,
/// but no longer than `latest`.
final class StartUp: Sendable {
    static let fallback: UInt32 = 250
    static let latest: UInt32 = 2000
    /// How long after a share's reply the start-up waits. The program that asked (`gio open`, a file
    /// manager) has yet to read the reply and go on, and the bus daemon to carry it; the start-up
    /// (GRDB, the sender) would take one of a two-core machine's cores from them, and the caller
    /// waited for it (docs/PERFORMANCE.md, "The cold-start machinery"). A person cannot see the
    /// wait before a notification or an upload; a call that needs the start-up runs it at once,
    /// without waiting out `afterReply`.
    static let afterReply: UInt32 = 30

    private struct State {
        var began = false
        /// Shares accepted before the start-up, with their activation tokens; nil once it ran.
        var heldBack: [(share: Share, activationToken: String?)]? = []
        var sharesBeingTaken = 0
        /// A reply's timer will run it (`afterReply`).
        var scheduled = false
    }

    private let state = Mutex(State())
    private let done = DispatchGroup()
    private let body: @Sendable @GLibMain (StartUp) -> Void

    /// `body` is the start-up; it takes the held-back shares (`takeHeldBack`) once their
    /// announcements may go out.
    init(_ body: @escaping @Sendable @GLibMain (StartUp) -> Void) {
        self.body = body
        done.enter()
    }

    /// Keeps a new share's announcements for the start-up; false once it ran (announce them now).
    func holdBack(_ share: Share, activationToken: String?) -> Bool {
        state.withLock { state in
            guard state.heldBack != nil else { return false }
            state.heldBack?.append((share, activationToken))
            return true
        }
    }

    /// The shares held back so far; any accepted from now on are announced by the service itself.
    func takeHeldBack() -> [(share: Share, activationToken: String?)] {
        state.withLock { state in
            defer { state.heldBack = nil }
            return state.heldBack ?? []
        }
    }

    /// Runs the start-up unless it ran (or is running) already.
    @GLibMain func begin() {
        guard
            !state.withLock({ state in
                defer { state.began = true }; return state.began
            })
        else { return }
        body(self)
        done.leave()
    }

    /// A Share or Open call arrived and will be answered; `shareAnswered` follows.
    func shareTaken() { state.withLock { $0.sharesBeingTaken += 1 } }

    /// Its reply went out (any thread): the start-up follows, `afterReply` later (one timer for all
    /// the replies before it runs; none once it ran).
    func shareAnswered() {
        let schedule = state.withLock { state in
            state.sharesBeingTaken -= 1
            defer { state.scheduled = true }
            return !state.began && !state.scheduled
        }
        if schedule { MainContext.after(milliseconds: Self.afterReply) { self.begin() } }
    }

    /// Returns once the start-up ran, starting it if it has not; for calls that are not a share.
    /// On the main loop it runs there and then; elsewhere the caller waits for the main loop.
    func complete() {
        if GLibMain.isCurrent {
            GLibMain.assumeIsolated { begin() }
            return
        }
        MainContext.invoke { self.begin() }
        done.wait()
    }

    func complete() async {
        MainContext.invoke { self.begin() }
        await withCheckedContinuation { continuation in
            done.notify(queue: .global()) { continuation.resume() }
        }
    }

    /// The fallback: `fallback` ms after the start, later while a share is being taken (its reply
    /// starts it), `latest` ms after the start at the latest; none once a reply's timer is set,
    /// which keeps to `afterReply` after that reply.
    @GLibMain func armFallback(waited: UInt32 = 0) {
        MainContext.after(milliseconds: Self.fallback) { [self] in
            let waiting = waited + Self.fallback
            let (taking, scheduled) = state.withLock { ($0.sharesBeingTaken > 0, $0.scheduled) }
            if scheduled { return }
            if taking, waiting < Self.latest {
                armFallback(waited: waiting)
            } else {
                begin()
            }
        }
    }
}
