import FerryCore
import FerryCrypto
import FerryMatrix
import Foundation

/// What a message means while Ferry waits for one of the person's devices to answer its request,
/// before any emoji verification was chosen: plain values in, the step out, no I/O
/// (VerificationWaitTests). EmojiVerifier sends what the step says and keeps what it starts.
struct VerificationWait {
    /// Ferry's device, as the other side verifies it.
    let us: SasParty
    /// The person's other devices whose keys checked out, by device id.
    let devices: [String: DeviceIdentity]
    /// The transaction of our request, and the devices it went to (empty: none sent).
    let requestID: String
    let asked: Set<String>

    enum Step {
        /// Not for this verification (another user, another transaction, a device not listed).
        case ignore
        /// A device declined our request: the verification ends with `cancel`'s reason, and the
        /// other devices asked are told it was declined.
        case declined(VerificationCancel, tellOthers: Set<String>)
        /// Only an answer to `device`: it offered no method Ferry speaks.
        case refuse(VerificationMessage, device: String)
        /// The verification goes on with `device`, starting `sas`, with `sending` sent to it.
        case go(SasVerification, device: String, sending: [VerificationMessage])
    }

    /// The step for `message`, from the person's own account (others are ignored before this).
    func step(for message: ToDeviceEvent, now: Date = Date()) -> Step {
        guard message.sender.utf8.elementsEqual(us.userID.utf8),
            let transaction = VerificationMessage.transactionID(of: message.content)
        else { return .ignore }
        if message.type == VerificationMessage.cancel, transaction == requestID {
            // A cancel names no device: as in matrix-rust-sdk, the whole request is over.
            let cancel = VerificationCancel(reading: message.content) ?? VerificationCancel(.user, "")
            return .declined(cancel, tellOthers: asked)
        }
        let from = message.content["from_device"]?.stringValue ?? ""
        guard let device = devices[from] else { return .ignore }
        switch message.type {
        case VerificationMessage.ready where transaction == requestID && asked.contains(from):
            guard VerificationRequest(readingReady: message.content)?.offersSas == true else {
                let refusal = VerificationCancel(.unknownMethod, "Ferry verifies by emoji only")
                return .refuse(refusal.message(transactionID: transaction), device: from)
            }
            let (sas, start) = SasVerification.start(transactionID: transaction, us: us, them: SasParty(device))
            return .go(sas, device: from, sending: [start])
        case VerificationMessage.request:
            guard let request = VerificationRequest(reading: message.content, now: now), request.offersSas else {
                return .ignore
            }
            // Ready, then start at once: the person asked from Ferry's side already. Should the
            // other device start too, the spec's tie-break keeps one of the two starts.
            let ready = VerificationRequest.ready(transactionID: transaction, fromDevice: us.deviceID)
            let (sas, start) = SasVerification.start(transactionID: transaction, us: us, them: SasParty(device))
            return .go(sas, device: from, sending: [ready, start])
        case VerificationMessage.start:
            do throws(VerificationCancel) {
                let (sas, accept) = try SasVerification.accept(
                    message.content, sender: message.sender, us: us, them: SasParty(device))
                return .go(sas, device: from, sending: [accept])
            } catch {
                return .refuse(error.message(transactionID: transaction), device: from)
            }
        default:
            return .ignore
        }
    }
}
