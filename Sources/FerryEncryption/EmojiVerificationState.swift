import FerryCore
import FerryCrypto

/// Where an emoji verification of Ferry's device stands, as the person and clients see it.
public struct EmojiVerificationState: Sendable, Hashable {
    /// The steps, in order; `done` and `cancelled` end it.
    public enum Stage: String, Sendable {
        /// Asked: waiting for the other device (to answer the request, accept, send its key).
        case waiting
        /// The emoji are there to compare; the person's answer is next.
        case comparing
        /// The person said they match; the other device's answer is next.
        case confirmed
        /// Both sides confirmed and the other device's keys checked out.
        case done
        /// Ended without verifying (`reason` says why).
        case cancelled
    }

    /// The verification's id for clients: stays the same from the request to the end.
    public var id: String
    /// Where it stands.
    public var stage: Stage
    /// The other device, once one answered (or the one asked, when a device was named).
    public var deviceID = ""
    /// The other device's name as its owner set it, cut and as the server lists it.
    public var deviceName = ""
    /// The seven emoji, while comparing and after.
    public var emoji: [SasEmoji] = []
    /// The same string as three numbers, for a device that shows numbers.
    public var decimals: [Int] = []
    /// Why it ended, for a person, when cancelled.
    public var reason = ""
    /// Ferry's device's verification as the server said after the other device's signature
    /// (nil until done; "unverified" when the other device did not sign, which it can only do
    /// when it holds the account's self-signing key).
    public var verification: DeviceVerification?
    /// The account whose device (Ferry's) is being verified.
    public var userID = ""

    /// A new verification at its first step.
    public init(id: String, stage: Stage, userID: String = "") {
        self.id = id
        self.stage = stage
        self.userID = userID
    }

    /// Whether it is over.
    public var isOver: Bool { stage == .done || stage == .cancelled }
}

extension VerificationCancel {
    /// Why the verification ended, for a person: who ended it and what it means.
    func sentence(byUs: Bool) -> String {
        switch (code, byUs) {
        case (.user, true): return tr("You cancelled the verification; nothing was verified.")
        case (.user, false): return tr("The verification was cancelled on your other device; nothing was verified.")
        case (.mismatchedSas, true):
            return tr(
                "You said the emoji do not match: nothing was verified. If they really differ, someone may be listening in."
            )
        case (.mismatchedSas, false): return tr("Your other device says the emoji do not match: nothing was verified.")
        case (.timeout, true): return tr("Nobody answered within ten minutes; nothing was verified.")
        case (.timeout, false): return tr("Your other device gave up waiting; nothing was verified.")
        case (.accepted, false): return tr("Another of your devices answered the request.")
        case (.keyMismatch, _), (.mismatchedCommitment, _):
            return tr("The other device's keys are not the ones the server lists for it; nothing was verified.")
        case (_, true):
            // TRANSLATORS: {code} is the Matrix code of the reason, such as "m.unknown_method", or "an unknown code".
            return tr("Ferry stopped the verification ({code}); nothing was verified.", ["code": shownCode])
        case (_, false):
            // TRANSLATORS: {code} is the Matrix code of the reason, such as "m.unknown_method", or "an unknown code".
            return tr("Your other device stopped the verification ({code}); nothing was verified.", ["code": shownCode])
        }
    }

    /// The code as a person may see it: a spec-shaped name (`m.…`, short, plain), else not the
    /// other side's text at all (it may be anything, terminal escapes included).
    private var shownCode: String {
        let name = code.rawValue
        let plain =
            name.utf8.count <= 64 && name.hasPrefix("m.")
            && name.unicodeScalars.allSatisfy {
                ("a"..."z").contains($0) || $0 == "." || $0 == "_"
            }
        // TRANSLATORS: completes "Ferry stopped the verification ({code}); nothing was verified." when the other
        // device's code is not shown.
        return plain ? name : tr("an unknown code")
    }
}
