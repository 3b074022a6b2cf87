import Crypto
import Foundation

/// One Olm session between this device and another: the Double Ratchet over Curve25519 as the
/// Olm specification defines it, which carries room keys to each device in to-device messages.
///
/// A value: `encrypt` and `decrypt` return results and leave the session changed, and the caller
/// keeps the new state before the message leaves (for encrypt) or is acted on (for decrypt), so
/// that a chain key is never used twice. A message that fails to decrypt changes nothing.
public struct OlmSession: Sendable {
    /// The limits libolm and vodozemac both keep: the messages a chain may skip ahead, the
    /// message keys kept for messages that arrive late, the receiving chains remembered.
    static let maxGap: UInt32 = 2000
    static let maxSkippedKeys = 40
    static let maxReceiverChains = 5

    struct SenderChain: Sendable {
        var ratchetKey: Curve25519.KeyAgreement.PrivateKey
        var chainKey: [UInt8]
        var index: UInt32
    }

    struct ReceiverChain: Sendable {
        var ratchetKey: [UInt8]
        var chainKey: [UInt8]
        var index: UInt32
    }

    struct SkippedKey: Sendable {
        var ratchetKey: [UInt8]
        var index: UInt32
        var messageKey: [UInt8]
    }

    /// The keys an outbound session's pre-key messages carry until the other side answers.
    struct PreKey: Sendable {
        var oneTimeKey: [UInt8]
        var baseKey: [UInt8]
        var identityKey: [UInt8]
    }

    /// `SHA-256(I_A ‖ E_A ‖ E_B)` in base64: the same on both sides.
    public let sessionID: String
    var rootKey: [UInt8]
    var senderChain: SenderChain?
    var receiverChains: [ReceiverChain] = []
    var skippedKeys: [SkippedKey] = []
    /// Set while no message from the other side has decrypted: our messages are pre-key messages.
    var preKey: PreKey?

    /// Starts a session with another device from its Curve25519 identity key and a one-time (or
    /// fallback) key claimed from the server, both base64. The session can encrypt at once.
    public static func outbound(
        from account: OlmAccount, theirIdentityKey: String, theirOneTimeKey: String
    ) throws(CryptoError) -> OlmSession {
        guard let identity = UnpaddedBase64.decode(theirIdentityKey),
            let oneTime = UnpaddedBase64.decode(theirOneTimeKey)
        else {
            throw .malformed("a device key that is not base64")
        }
        let base = Curve25519.KeyAgreement.PrivateKey()
        let secret =
            try OlmKDF.agree(account.identityKey, oneTime) + OlmKDF.agree(base, identity) + OlmKDF.agree(base, oneTime)
        let (root, chain) = OlmKDF.root(sharedSecret: secret)
        let ourIdentity = Array(account.identityKey.publicKey.rawRepresentation)
        let baseKey = Array(base.publicKey.rawRepresentation)
        return OlmSession(
            sessionID: Self.id(aliceIdentity: ourIdentity, base: baseKey, oneTime: oneTime), rootKey: root,
            senderChain: SenderChain(ratchetKey: Curve25519.KeyAgreement.PrivateKey(), chainKey: chain, index: 0),
            preKey: PreKey(oneTimeKey: oneTime, baseKey: baseKey, identityKey: ourIdentity))
    }

    /// Starts a session from a pre-key message another device sent to one of our one-time or
    /// fallback keys, and decrypts it. The one-time key it used is removed from `account` only
    /// when the message decrypts.
    public static func inbound(
        to account: inout OlmAccount, theirIdentityKey: String, preKeyMessage body: String
    ) throws(CryptoError) -> (session: OlmSession, plaintext: [UInt8]) {
        guard let bytes = UnpaddedBase64.decode(body) else { throw .malformed("an Olm message that is not base64") }
        let envelope = try OlmPreKeyMessage(bytes)
        guard UnpaddedBase64.decode(theirIdentityKey) == envelope.identityKey else {
            throw .authenticationFailed("the pre-key message's identity key is not its sender's")
        }
        var updated = account
        guard let oneTime = updated.takeKey(public: envelope.oneTimeKey) else {
            throw .authenticationFailed("the pre-key message names a one-time key this device does not hold")
        }
        let secret =
            try OlmKDF.agree(oneTime, envelope.identityKey) + OlmKDF.agree(account.identityKey, envelope.baseKey)
            + OlmKDF.agree(oneTime, envelope.baseKey)
        let (root, chain) = OlmKDF.root(sharedSecret: secret)
        let (message, _, _) = try OlmMessage.read(envelope.message)
        var session = OlmSession(
            sessionID: Self.id(
                aliceIdentity: envelope.identityKey, base: envelope.baseKey, oneTime: envelope.oneTimeKey),
            rootKey: root, senderChain: nil, preKey: nil)
        session.receiverChains = [ReceiverChain(ratchetKey: message.ratchetKey, chainKey: chain, index: 0)]
        let plaintext = try session.decrypt(normal: envelope.message)
        account = updated
        return (session, plaintext)
    }

    init(sessionID: String, rootKey: [UInt8], senderChain: SenderChain?, preKey: PreKey?) {
        self.sessionID = sessionID
        self.rootKey = rootKey
        self.senderChain = senderChain
        self.preKey = preKey
    }

    static func id(aliceIdentity: [UInt8], base: [UInt8], oneTime: [UInt8]) -> String {
        UnpaddedBase64.encode(SHA256.hash(data: aliceIdentity + base + oneTime))
    }

    /// Encrypts `plaintext`; returns the message type (0 pre-key, 1 normal) and the base64 body
    /// for `m.room.encrypted`'s `ciphertext.<their identity key>`.
    public mutating func encrypt(_ plaintext: [UInt8]) throws(CryptoError) -> (type: Int, body: String) {
        if senderChain == nil {
            // The other side spoke last: a new ratchet key, and a new chain from the root.
            guard let theirs = receiverChains.first else { throw .malformed("an Olm session with no chain to send on") }
            let ratchetKey = Curve25519.KeyAgreement.PrivateKey()
            let (root, chain) = try OlmKDF.ratchet(root: rootKey, ours: ratchetKey, theirs: theirs.ratchetKey)
            rootKey = root
            senderChain = SenderChain(ratchetKey: ratchetKey, chainKey: chain, index: 0)
        }
        guard var chain = senderChain, chain.index < UInt32.max else {
            throw .exhausted("the Olm sending chain is at its end")
        }
        let cipher = MessageCipher(secret: OlmKDF.messageKey(chain.chainKey), info: "OLM_KEYS")
        let message = OlmMessage(
            ratchetKey: Array(chain.ratchetKey.publicKey.rawRepresentation), chainIndex: chain.index,
            ciphertext: cipher.encrypt(plaintext))
        let fields = message.fields
        let normal = fields + cipher.mac(fields)
        chain.chainKey = OlmKDF.nextChain(chain.chainKey)
        chain.index += 1
        senderChain = chain
        guard let preKey else { return (1, UnpaddedBase64.encode(normal)) }
        let envelope = OlmPreKeyMessage(
            oneTimeKey: preKey.oneTimeKey, baseKey: preKey.baseKey,
            identityKey: preKey.identityKey, message: normal)
        return (0, UnpaddedBase64.encode(envelope.bytes))
    }

    /// Whether a pre-key message (base64) belongs to this session: one that does not decrypt on
    /// it is a replay or a forgery, never a reason to start the session anew.
    public func matches(preKeyMessage body: String) -> Bool {
        guard let bytes = UnpaddedBase64.decode(body), let envelope = try? OlmPreKeyMessage(bytes) else { return false }
        return Self.id(aliceIdentity: envelope.identityKey, base: envelope.baseKey, oneTime: envelope.oneTimeKey)
            == sessionID
    }

    /// Decrypts a message of type 0 or 1 sent on this session.
    public mutating func decrypt(type: Int, body: String) throws(CryptoError) -> [UInt8] {
        guard let bytes = UnpaddedBase64.decode(body) else { throw .malformed("an Olm message that is not base64") }
        switch type {
        case 0:
            let envelope = try OlmPreKeyMessage(bytes)
            guard
                Self.id(aliceIdentity: envelope.identityKey, base: envelope.baseKey, oneTime: envelope.oneTimeKey)
                    == sessionID
            else {
                throw .authenticationFailed("the pre-key message belongs to another session")
            }
            return try decrypt(normal: envelope.message)
        case 1: return try decrypt(normal: bytes)
        default: throw .unsupported("Olm message type \(type)")
        }
    }

    /// Decrypts a normal message on a copy of the state, and keeps the copy only when its MAC held.
    private mutating func decrypt(normal bytes: [UInt8]) throws(CryptoError) -> [UInt8] {
        let (message, fields, mac) = try OlmMessage.read(bytes)
        var next = self
        let messageKey = try next.messageKey(for: message)
        let cipher = MessageCipher(secret: messageKey, info: "OLM_KEYS")
        guard cipher.verify(mac, of: fields) else { throw .authenticationFailed("the Olm message's MAC") }
        let plaintext = try cipher.decrypt(message.ciphertext)
        next.preKey = nil
        self = next
        return plaintext
    }

    /// The message key for `message`, moving this state's receiving chains as needed.
    private mutating func messageKey(for message: OlmMessage) throws(CryptoError) -> [UInt8] {
        if let position = receiverChains.firstIndex(where: { $0.ratchetKey == message.ratchetKey }) {
            var chain = receiverChains[position]
            if message.chainIndex < chain.index {
                guard
                    let skipped = skippedKeys.firstIndex(where: {
                        $0.ratchetKey == message.ratchetKey && $0.index == message.chainIndex
                    })
                else {
                    throw .replayedOrTooFar("Olm message \(message.chainIndex) was already read")
                }
                return skippedKeys.remove(at: skipped).messageKey
            }
            let key = try advance(&chain, to: message.chainIndex)
            receiverChains[position] = chain
            return key
        }
        // A ratchet key we have not seen: the other side answered, and a new chain starts.
        guard let sender = senderChain else {
            throw .authenticationFailed("an Olm message on a chain this session never started")
        }
        let (root, chainKey) = try OlmKDF.ratchet(root: rootKey, ours: sender.ratchetKey, theirs: message.ratchetKey)
        var chain = ReceiverChain(ratchetKey: message.ratchetKey, chainKey: chainKey, index: 0)
        let key = try advance(&chain, to: message.chainIndex)
        rootKey = root
        senderChain = nil
        receiverChains.insert(chain, at: 0)
        if receiverChains.count > Self.maxReceiverChains { receiverChains.removeLast() }
        return key
    }

    /// Steps `chain` to `index`, keeping the keys of the messages skipped on the way; returns the
    /// message key at `index` and leaves the chain one past it.
    private mutating func advance(_ chain: inout ReceiverChain, to index: UInt32) throws(CryptoError) -> [UInt8] {
        // The last index would leave the chain with no next step; no honest sender gets there.
        guard index < UInt32.max, index - chain.index <= Self.maxGap else {
            throw .replayedOrTooFar("an Olm message \(index - chain.index) steps ahead of its chain")
        }
        while chain.index < index {
            skippedKeys.append(
                SkippedKey(
                    ratchetKey: chain.ratchetKey, index: chain.index, messageKey: OlmKDF.messageKey(chain.chainKey)))
            if skippedKeys.count > Self.maxSkippedKeys { skippedKeys.removeFirst() }
            chain.chainKey = OlmKDF.nextChain(chain.chainKey)
            chain.index += 1
        }
        let key = OlmKDF.messageKey(chain.chainKey)
        chain.chainKey = OlmKDF.nextChain(chain.chainKey)
        chain.index += 1
        return key
    }
}
