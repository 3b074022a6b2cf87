import FerryCore
import FerryMatrix

/// Why an event for an encrypted room could not be made. Each is permanent for the share (Ferry
/// never falls back to sending it unencrypted) except a server error, which is retried as any.
public enum EncryptionFailure: Error, Sendable {
    /// The homeserver failed a request (a key query, a claim, a to-device message).
    case server(MatrixError)
    /// The outbox could not keep a state; nothing was sent.
    case storage(String)
    /// A kept state does not open with the key in the Secret Service.
    case sealedStateUnreadable(String)
    /// No key to seal the state with could be kept (neither Secret Service nor a private file).
    case noSealKey
    /// The Secret Service could not be asked for the key (locked, not running yet): tried again.
    case sealKeyUnavailable(String)
    /// The key of the kept state is gone: this device cannot encrypt until a new sign-in.
    case deviceKeysLost
    /// The room asks for an algorithm Ferry does not speak.
    case unsupportedAlgorithm(String)
    /// The protocol layer refused (a ratchet at its end, a state that does not decode).
    case crypto(String)

    /// As the sender hears it: a server error as it is; the rest as a refusal marked
    /// `encryptionErrcode`, which fails this destination with EncryptedRoom (no key material in it).
    /// Each reason completes EncryptedRoom's sentence, in the person's language.
    public var matrixError: MatrixError {
        let reason: String
        switch self {
        case .server(let error): return error
        case .storage(let why):
            // TRANSLATORS: completes "{room} is end-to-end encrypted and Ferry could not encrypt for it: {reason}.
            // Nothing was sent there unencrypted."; {why} says what went wrong, often in English.
            reason = tr("its encryption state could not be kept ({why})", ["why": why])
        case .sealedStateUnreadable(let name):
            // TRANSLATORS: completes "{room} is end-to-end encrypted and Ferry could not encrypt for it: {reason}.
            // Nothing was sent there unencrypted."; {name} names the state in Ferry's database, such as
            // "room:!abc:example.org".
            reason = tr("the kept encryption state ({name}) does not open with its key", ["name": name])
        case .noSealKey:
            // TRANSLATORS: completes "{room} is end-to-end encrypted and Ferry could not encrypt for it: {reason}.
            // Nothing was sent there unencrypted."
            reason = tr("no key to protect the encryption state could be kept")
        case .sealKeyUnavailable(let why):
            // Passing: retried like a server that is away, never a reason to give the share up.
            // TRANSLATORS: why a share to an encrypted room waits (Ferry tries again later); {why} is the keyring's own
            // words, often in English.
            let waiting = tr("the keyring holding Ferry's encryption key did not answer ({why})", ["why": why])
            return MatrixError(kind: .http(status: 503), errcode: MatrixError.encryptionErrcode, message: waiting)
        case .deviceKeysLost:
            // TRANSLATORS: completes "{room} is end-to-end encrypted and Ferry could not encrypt for it: {reason}.
            // Nothing was sent there unencrypted."
            reason = tr("this device's encryption keys are lost; sign out and sign in again")
        case .unsupportedAlgorithm(let algorithm):
            reason =
                algorithm.isEmpty
                // TRANSLATORS: completes "{room} is end-to-end encrypted and Ferry could not encrypt for it: {reason}.
                // Nothing was sent there unencrypted."
                ? tr("the room's encryption names no algorithm")
                : tr(
                    // TRANSLATORS: completes "{room} is end-to-end encrypted and Ferry could not encrypt for it:
                    // {reason}. Nothing was sent there unencrypted."; {algorithm} is the name of an encryption
                    // algorithm, such as "m.megolm.v1.aes-sha2".
                    "the room asks for encryption by {algorithm}, which Ferry does not speak", ["algorithm": algorithm])
        case .crypto(let why): reason = why
        }
        return MatrixError(kind: .refused, errcode: MatrixError.encryptionErrcode, message: reason)
    }
}
