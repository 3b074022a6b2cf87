import FerryCore

/// One side of one `m.sas.v1` verification over to-device messages: a value the caller keeps
/// in memory for its few minutes (nothing here is worth keeping across a restart; a verification
/// cut short starts again with new keys), feeds every message of the transaction, and asks for
/// the SAS to show and for the person's answer.
///
/// Each step returns the messages to send to the other device, in order. A step that refuses
/// what the other side sent throws the `VerificationCancel` whose `message(transactionID:)` is
/// to be sent, and the verification is over (`phase` says by whom). Trust nothing before
/// `phase == .done`: only then have both people compared and both MACs held.
///
///     starting side                                  accepting side
///     start(…)            ── start ──────────────▶   accept(…)
///     receive(accept)     ◀───────────── accept ──
///                         ── key ────────────────▶   receive(key)
///     receive(key)        ◀──────────────── key ──
///     (both: show shortAuthenticationString, the people compare)
///     confirm()           ── mac ────────────────▶   receive(mac)
///     receive(mac)        ◀──────────────── mac ──   confirm()
///                         ── done ─── ◀── done ──
public struct SasVerification: Sendable {
    /// Where the verification stands.
    public enum Phase: Sendable, Hashable {
        /// We sent the start; their accept is next.
        case awaitingAccept
        /// Their ephemeral key is next (we have sent our accept, or our key).
        case awaitingKey
        /// Both keys are exchanged: the SAS is there for the people to compare.
        case comparing
        /// Our person confirmed and our MAC went out; their MAC is next.
        case awaitingMac
        /// Both confirmed and their MAC held: their device key (and `verifiedMasterKey`) verified.
        case done
        /// We ended it, with this cancel (sent, or to be sent).
        case cancelledByUs(VerificationCancel)
        /// They ended it.
        case cancelledByThem(VerificationCancel)
    }

    /// The transaction every message carries.
    public let transactionID: String
    /// This device.
    public let us: SasParty
    /// The device being verified, with the keys we hold for it.
    public let them: SasParty
    /// Whether this side sent the start (it decides the order of the SAS info).
    public let weStarted: Bool
    /// Where it stands.
    public private(set) var phase: Phase
    /// The SAS to show, once both keys are exchanged.
    public private(set) var shortAuthenticationString: ShortAuthenticationString?
    /// How it may be shown: `decimal`, `emoji` or both, as the two sides agreed.
    public private(set) var shortAuthenticationMethods: [String] = []
    /// Their master key, once the verification is done and their MAC covered the one we hold for
    /// them and held; nil before, and after a cancel.
    public var verifiedMasterKey: String? { phase == .done ? theirMasterKey : nil }
    /// The MAC method agreed on, once it is (for the log: `hkdf-hmac-sha256` means an old client).
    public private(set) var macMethod: SasMacMethod?
    /// Whether they sent `m.key.verification.done`.
    public private(set) var theyAreDone = false

    private let keyPair: SasKeyPair
    /// The start content as sent: what the commitment covers.
    private let startContent: JSONValue
    /// The accepting side's commitment, held by the starting side until the key it covers comes.
    private var commitment: String?
    private var secret: SasSecret?
    /// Their MAC held before our person confirmed: confirming then finishes at once.
    private var theirMacHeld = false
    /// Their master key, when their MAC over it held.
    private var theirMasterKey: String?

    private init(
        transactionID: String, us: SasParty, them: SasParty, weStarted: Bool, keyPair: SasKeyPair,
        startContent: JSONValue, phase: Phase
    ) {
        self.transactionID = transactionID
        self.us = us
        self.them = them
        self.weStarted = weStarted
        self.keyPair = keyPair
        self.startContent = startContent
        self.phase = phase
    }

    // MARK: Beginning

    /// Starts a verification of `them` (after their `ready`, with the request's transaction id;
    /// or on its own, which the spec deprecates). Returns the start to send.
    public static func start(
        transactionID: String, us: SasParty, them: SasParty
    ) -> (SasVerification, VerificationMessage) {
        start(transactionID: transactionID, us: us, them: them, keyPair: SasKeyPair())
    }

    static func start(
        transactionID: String, us: SasParty, them: SasParty, keyPair: SasKeyPair
    ) -> (SasVerification, VerificationMessage) {
        let content = SasStart.ours(transactionID: transactionID, fromDevice: us.deviceID)
        let verification = SasVerification(
            transactionID: transactionID, us: us, them: them, weStarted: true, keyPair: keyPair,
            startContent: content, phase: .awaitingAccept)
        return (verification, VerificationMessage(type: VerificationMessage.start, content: content))
    }

    /// Accepts the start `content` that `sender` sent, when it comes from the device `them` and
    /// offers something in common. Returns the accept to send. Throws the cancel to send (to the
    /// start's `transaction_id`, when it has one) otherwise.
    public static func accept(
        _ content: JSONValue, sender: String, us: SasParty, them: SasParty
    ) throws(VerificationCancel)
        -> (SasVerification, VerificationMessage)
    {
        try accept(content, sender: sender, us: us, them: them, keyPair: SasKeyPair())
    }

    static func accept(
        _ content: JSONValue, sender: String, us: SasParty, them: SasParty, keyPair: SasKeyPair
    ) throws(VerificationCancel)
        -> (SasVerification, VerificationMessage)
    {
        let start = try SasStart(reading: content)
        guard sender.utf8.elementsEqual(them.userID.utf8), start.fromDevice.utf8.elementsEqual(them.deviceID.utf8)
        else {
            throw VerificationCancel(.userMismatch, "the start comes from another device than the one to verify")
        }
        var verification = SasVerification(
            transactionID: start.transactionID, us: us, them: them, weStarted: false,
            keyPair: keyPair, startContent: content, phase: .awaitingKey)
        verification.macMethod = start.macMethod
        verification.shortAuthenticationMethods = start.sasMethods
        let accept = SasAccept.content(accepting: start, publicKey: keyPair.publicKey)
        return (verification, VerificationMessage(type: VerificationMessage.accept, content: accept))
    }

    /// A new transaction id, for a request or a start of ours: 32 hex digits, random.
    public static func newTransactionID() -> String {
        let digits = Array("0123456789abcdef")
        return String(randomBytes(16).flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]] })
    }

    // MARK: Messages from the other side

    /// Takes one message `sender` sent for this verification, and returns what to send back.
    ///
    /// A message from another user, or for another transaction, is not part of this verification:
    /// it is refused with a cancel for its own sender and transaction and leaves this one as it
    /// was, since anyone can send to-device messages to us and none of them may end ours.
    /// Once the verification has ended, messages are ignored: answering a cancel, or a message
    /// after one, with another cancel is how two clients loop.
    public mutating func receive(
        type: String, content: JSONValue, sender: String
    ) throws(VerificationCancel) -> [VerificationMessage] {
        guard sender.utf8.elementsEqual(them.userID.utf8) else {
            throw VerificationCancel(.userMismatch, "a verification message from another user")
        }
        guard let id = VerificationMessage.transactionID(of: content), id.utf8.elementsEqual(transactionID.utf8) else {
            throw VerificationCancel(.unknownTransaction, "a verification message for another transaction")
        }
        switch phase {
        case .cancelledByUs, .cancelledByThem: return []
        case .done:
            if type == VerificationMessage.done { theyAreDone = true }
            return []
        default: break
        }
        if type == VerificationMessage.cancel {
            phase = .cancelledByThem(
                VerificationCancel(reading: content) ?? VerificationCancel(.invalidMessage, "a cancel without a code"))
            return []
        }
        do throws(VerificationCancel) {
            switch (type, phase) {
            case (VerificationMessage.accept, .awaitingAccept): return try receiveAccept(content)
            case (VerificationMessage.start, .awaitingAccept): return try receiveCompetingStart(content, sender: sender)
            case (VerificationMessage.key, .awaitingKey): return try receiveKey(content)
            case (VerificationMessage.mac, .comparing), (VerificationMessage.mac, .awaitingMac):
                return try receiveMac(content)
            case (VerificationMessage.done, .awaitingMac):
                theyAreDone = true
                return []
            default: throw VerificationCancel(.unexpectedMessage, "\(type.prefix(64)) out of order")
            }
        } catch {
            phase = .cancelledByUs(error)
            throw error
        }
    }

    /// The starting side takes the accept: the choices made from our offer, and the commitment to
    /// a key not yet seen. Our key goes out only now, so that theirs is fixed before they see ours.
    private mutating func receiveAccept(_ content: JSONValue) throws(VerificationCancel) -> [VerificationMessage] {
        let accept = try SasAccept(reading: content)
        macMethod = accept.macMethod
        shortAuthenticationMethods = accept.sasMethods
        commitment = accept.commitment
        phase = .awaitingKey
        return [keyMessage()]
    }

    /// Both sides sent a start in one transaction (after a request, either may). The spec's
    /// tie-break keeps the start of the smaller user id (device id for one user); if theirs wins,
    /// this side becomes the accepting one, as if ours had never been sent.
    private mutating func receiveCompetingStart(
        _ content: JSONValue, sender: String
    ) throws(VerificationCancel) -> [VerificationMessage] {
        guard content["method"]?.stringValue == VerificationMessage.sasMethod else {
            throw VerificationCancel(.unexpectedMessage, "both sides started, with different methods")
        }
        if us.precedes(them) { return [] }
        let (accepting, accept) = try Self.accept(content, sender: sender, us: us, them: them, keyPair: SasKeyPair())
        self = accepting
        return [accept]
    }

    /// Their ephemeral key. The starting side first holds it to the commitment made before our
    /// key was sent: a man in the middle who saw our key cannot pick one to match the SAS.
    private mutating func receiveKey(_ content: JSONValue) throws(VerificationCancel) -> [VerificationMessage] {
        guard let theirs = content["key"]?.stringValue else {
            throw VerificationCancel(.invalidMessage, "a key message without a key")
        }
        if weStarted {
            guard let commitment,
                SasInfo.commitment(publicKey: theirs, start: startContent).utf8.elementsEqual(commitment.utf8)
            else {
                throw VerificationCancel(.mismatchedCommitment, "the key is not the one the accept committed to")
            }
        }
        let secret = try keyPair.agree(with: theirs)
        let ours = keyPair.publicKey
        let info =
            weStarted
            ? SasInfo.sas(
                starter: us, starterKey: ours, accepter: them, accepterKey: theirs, transactionID: transactionID)
            : SasInfo.sas(
                starter: them, starterKey: theirs, accepter: us, accepterKey: ours, transactionID: transactionID)
        self.secret = secret
        shortAuthenticationString = ShortAuthenticationString(bytes: secret.bytes(info: info, count: 6))
        phase = .comparing
        return weStarted ? [] : [keyMessage()]
    }

    /// Their MACs, checked as soon as they come (they may come before our person confirms; the
    /// verification still ends only when both have). The list of key ids is checked first, so
    /// that no key can be dropped from or slipped into the message; then each key we hold a copy
    /// of. A key id we hold nothing for is neither checked nor trusted. Their device key must be
    /// among them: it is the device being verified.
    private mutating func receiveMac(_ content: JSONValue) throws(VerificationCancel) -> [VerificationMessage] {
        guard let secret, let macMethod else { throw VerificationCancel(.unexpectedMessage, "a MAC before the keys") }
        guard let members = content["mac"]?.objectValue, !members.isEmpty, members.count <= 32,
            let keysMac = content["keys"]?.stringValue
        else {
            throw VerificationCancel(.invalidMessage, "a MAC message without its MACs")
        }
        var macs: [String: String] = [:]
        for (id, value) in members {
            guard let text = value.stringValue else {
                throw VerificationCancel(.invalidMessage, "a MAC that is not a string")
            }
            macs[id] = text
        }
        let info = SasInfo.mac(sender: them, receiver: us, transactionID: transactionID)
        guard macMethod.isMac(keysMac, of: SasInfo.keyIDs(macs.keys), info: info + "KEY_IDS", secret: secret) else {
            throw VerificationCancel(.keyMismatch, "the MAC of the list of keys does not hold")
        }
        var deviceHeld = false, master: String?
        for (id, mac) in macs {
            let isDevice = id.utf8.elementsEqual(them.deviceKeyID.utf8)
            let isMaster = !isDevice && them.masterKeyID.map { id.utf8.elementsEqual($0.utf8) } == true
            guard isDevice || isMaster, let key = isDevice ? them.ed25519 : them.masterKey else { continue }
            guard macMethod.isMac(mac, of: key, info: info + id, secret: secret) else {
                throw VerificationCancel(.keyMismatch, "a key's MAC does not hold: it is not the key we have for them")
            }
            if isDevice { deviceHeld = true } else { master = key }
        }
        guard deviceHeld else { throw VerificationCancel(.keyMismatch, "no MAC over the device's own key") }
        theirMasterKey = master
        theirMacHeld = true
        guard phase == .awaitingMac else { return [] }
        phase = .done
        return [VerificationMessage.done(transactionID: transactionID)]
    }

    // MARK: The person's answer

    /// Our person says the SAS matches: our MACs go out (and `done`, when theirs already held).
    /// Confirming twice, or when there is nothing to compare, sends nothing.
    public mutating func confirm() -> [VerificationMessage] {
        guard phase == .comparing, let secret, let macMethod else { return [] }
        var messages = [macMessage(secret: secret, method: macMethod)]
        if theirMacHeld {
            phase = .done
            messages.append(VerificationMessage.done(transactionID: transactionID))
        } else {
            phase = .awaitingMac
        }
        return messages
    }

    /// Ends the verification from our side: `.mismatchedSas` when the person says the SAS
    /// differs, `.user` when they cancel, `.timeout` when it took too long. Returns the cancel to
    /// send, or nil when it had already ended.
    public mutating func cancel(_ code: VerificationCancel.Code, reason: String) -> VerificationMessage? {
        switch phase {
        case .done, .cancelledByUs, .cancelledByThem: return nil
        default:
            let cancel = VerificationCancel(code, reason)
            phase = .cancelledByUs(cancel)
            return cancel.message(transactionID: transactionID)
        }
    }

    // MARK: Our messages

    private func keyMessage() -> VerificationMessage {
        VerificationMessage(
            type: VerificationMessage.key,
            content: ["transaction_id": .string(transactionID), "key": .string(keyPair.publicKey)])
    }

    /// Our MACs: our device key, our master key when we vouch for it, and the list of their ids.
    private func macMessage(secret: SasSecret, method: SasMacMethod) -> VerificationMessage {
        var keys = [us.deviceKeyID: us.ed25519]
        if let id = us.masterKeyID, let master = us.masterKey { keys[id] = master }
        let info = SasInfo.mac(sender: us, receiver: them, transactionID: transactionID)
        var macs: [String: JSONValue] = [:]
        for (id, key) in keys { macs[id] = .string(method.mac(key, info: info + id, secret: secret)) }
        return VerificationMessage(
            type: VerificationMessage.mac,
            content: [
                "transaction_id": .string(transactionID),
                "mac": .object(macs),
                "keys": .string(method.mac(SasInfo.keyIDs(keys.keys), info: info + "KEY_IDS", secret: secret)),
            ])
    }
}
