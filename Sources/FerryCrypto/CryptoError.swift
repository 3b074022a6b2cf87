/// What went wrong in the protocol layer, in words for a log (never with key material in them).
public enum CryptoError: Error, Equatable, Sendable {
    /// The bytes are not a message, key or object of the expected format.
    case malformed(String)
    /// A version byte or algorithm this implementation does not speak.
    case unsupported(String)
    /// A MAC or signature did not verify: the input was changed, or is not for us.
    case authenticationFailed(String)
    /// A message index or chain step that was already used, or lies too far ahead.
    case replayedOrTooFar(String)
    /// The ratchet cannot go on (a Megolm session at its last index, a chain at its bound).
    case exhausted(String)
}
