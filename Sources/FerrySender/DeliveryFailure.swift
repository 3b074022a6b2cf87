import FerryCore
import FerryMatrix

/// Why one delivery stopped, sorted by what happens next.
enum DeliveryFailure: Error {
    /// Try again later (network, server away, rate limit, 5xx).
    case transient(MatrixError)
    /// The token is gone: sign-in is needed before anything else is sent.
    case unauthorized(token: String)
    /// This destination will not take the share; the others go on.
    case permanent(ShareError)
    /// The share was cancelled while it was being sent.
    case cancelled

    /// Sorts a failed request for `destination`.
    static func from(_ error: MatrixError, destination: String, token: String) -> DeliveryFailure {
        if error.isUnknownToken { return .unauthorized(token: token) }
        if error.isTransient { return .transient(error) }
        if error.errcode == MatrixError.encryptionErrcode {
            return .permanent(.encryptedRoom(destination, reason: error.message))
        }
        switch (error.status, error.errcode) {
        case (403, _): return .permanent(.forbidden(destination, reason: error.message))
        case (404, _), (_, "M_NOT_FOUND"): return .permanent(.roomNotFound(destination))
        default: return .permanent(.deliveryFailed(destination, reason: error.description))
        }
    }
}
