/// Where a share is in its life. Raw values are the strings of the D-Bus API and the database.
public enum ShareState: String, Sendable, Codable, CaseIterable {
    /// Accepted while nobody was signed in (or as someone else): it goes on once its person signs in.
    case awaitingSignIn = "awaiting-sign-in"
    /// Accepted without a destination: it waits for a person to choose one in the dialog.
    case awaitingDestination = "awaiting-destination"
    /// Ready for the sender.
    case queued
    /// The sender has it: uploading, sending, or waiting to retry.
    case sending
    /// Every destination has every event.
    case sent
    /// At least one destination failed for good and none is left to try.
    case failed
    /// A person cancelled it; nothing more of it goes out.
    case cancelled

    /// The state as a word in a sentence a person reads ("Share … is already sent"), in their
    /// language; `rawValue` stays what the D-Bus API, the database and scripts see.
    public var displayName: String {
        // The English is the state's name in the API, as these sentences have always shown it.
        switch self {
        // TRANSLATORS: a share's state in sentences such as "Share {id} is {state}; …"; a translation may be a phrase
        // ("waiting for a sign-in").
        case .awaitingSignIn: return trc("share state", "awaiting-sign-in")
        // TRANSLATORS: a share's state in sentences such as "Share {id} is {state}; …"; a translation may be a phrase
        // ("waiting for a destination").
        case .awaitingDestination: return trc("share state", "awaiting-destination")
        // TRANSLATORS: a share's state in sentences such as "Share {id} is {state}; …".
        case .queued: return trc("share state", "queued")
        // TRANSLATORS: a share's state in sentences such as "Share {id} is {state}; …".
        case .sending: return trc("share state", "sending")
        // TRANSLATORS: a share's state in sentences such as "Share {id} is {state}; …".
        case .sent: return trc("share state", "sent")
        // TRANSLATORS: a share's state in sentences such as "Share {id} is {state}; …".
        case .failed: return trc("share state", "failed")
        // TRANSLATORS: a share's state in sentences such as "Share {id} is {state}; …".
        case .cancelled: return trc("share state", "cancelled")
        }
    }

    /// Nothing more happens to the share by itself. (A failed share may still be retried by a person.)
    public var isFinal: Bool { self == .sent || self == .failed || self == .cancelled }

    /// Cancel is allowed until a share is sent or already cancelled.
    public var isCancellable: Bool { self != .sent && self != .cancelled }

    /// Waiting for a person (to sign in or to choose where), not for Ferry: the service may exit meanwhile.
    public var awaitsPerson: Bool { self == .awaitingSignIn || self == .awaitingDestination }

    /// Ferry itself has work to do for the share; the service stays up while any share is here.
    public var isPendingWork: Bool { self == .queued || self == .sending }
}

/// The sign-in step and the dialog step, as one decision: where a share goes next.
public enum Routing {
    /// A new share (or one whose account state changed): signed out → sign-in step; no destination
    /// → the share dialog; otherwise the outbox queue.
    public static func route(destinations: [String], signedIn: Bool) -> ShareState {
        guard signedIn else { return .awaitingSignIn }
        return destinations.isEmpty ? .awaitingDestination : .queued
    }
}
