/// The sentence that tells a person why Ferry needs them to sign in.
public enum SignInReason {
    /// Waiting shares are counted only this far: the sentence goes with every share that arrives
    /// while signed out, and counting a long queue each time made accepting shares quadratic.
    public static let countLimit = 1000

    /// `waiting`: the waiting shares counted, at most `countLimit`.
    public static func sentence(waiting: Int) -> String {
        let count = max(1, waiting)
        guard count < countLimit else {
            return trn(
                "Sign in to send more than {count} waiting share.", "Sign in to send more than {count} waiting shares.",
                countLimit - 1)
        }
        return trn("Sign in to send {count} waiting share.", "Sign in to send {count} waiting shares.", count)
    }
}
