/// What some errors are about, as values: each chooses a whole translated sentence of its own
/// (ShareError.message), so that no sentence is picked by comparing English words.
extension ShareError {
    /// A file of a kind Ferry does not read.
    public enum FileKind: Sendable, Equatable {
        case fifo, characterDevice, blockDevice, socket
        /// Anything else that is not a regular file (as a remote file system reports it).
        case other
    }

    /// A text with a length limit.
    public enum TextField: Sendable, Equatable {
        case subject, message, text
        /// The person's message and the text or link it goes with, counted as they go out as one event.
        case messageWithTextAsSent
        /// A text counted as it goes out in an event, where some characters take several bytes.
        case textAsSent
    }

    /// A change Ferry's database refused.
    public enum StoredChange: Sendable, Equatable {
        case newShare, destinations, retry, cancellation, signIn
    }

    /// A way of signing in a homeserver may not offer.
    public enum LoginMethod: Sendable, Equatable {
        case password, browser
    }

    /// What a homeserver asks the account's password for.
    public enum PasswordPurpose: Sendable, Equatable {
        case setUpCrossSigning
    }
}
