/// The sentence that tells a person why Ferry needs them to sign in.
public enum SignInReason {
    /// Waiting shares are counted only this far: the sentence goes with every share that arrives
    /// while signed out, and counting a long queue each time made accepting shares quadratic.
    public static let countLimit = 1000

    /// `waiting`: the waiting shares counted, at most `countLimit`.
    public static func sentence(waiting: Int) -> String {
        switch max(1, waiting) {
        case 1: return "Sign in to send 1 waiting share."
        case countLimit...: return "Sign in to send more than \(countLimit - 1) waiting shares."
        case let count: return "Sign in to send \(count) waiting shares."
        }
    }
}
