import Crypto
import Foundation

// What is kept of an account and of its sessions between runs. Secret: Ferry keeps it only in
// its encrypted store, and keeps it after every change, before the change has any effect outside
// (a key uploaded, a message sent), so that a crash never reuses a one-time key or a chain step.

extension OlmAccount {
    /// An account's keys and counters, as plain bytes.
    public struct State: Codable, Sendable, Equatable {
        /// A stored key pair: the key id and the raw 32-byte private key.
        public struct StoredKey: Codable, Sendable, Equatable {
            /// The key id, as in `signed_curve25519:<id>`.
            public var id: String
            /// The raw 32-byte Curve25519 private key.
            @KeptBytes public var key: [UInt8]
            /// Whether the server has the public half.
            public var published: Bool
        }

        /// The raw 32-byte Ed25519 private key.
        @KeptBytes public var signingKey: [UInt8]
        /// The raw 32-byte Curve25519 identity private key.
        @KeptBytes public var identityKey: [UInt8]
        /// The one-time keys no pre-key message has used yet.
        public var oneTimeKeys: [StoredKey]
        /// The current fallback key.
        public var fallbackKey: StoredKey?
        /// The fallback key before it, kept for pre-key messages still on their way.
        public var previousFallbackKey: StoredKey?
        /// The number the next key id is made from, so that no id is given twice.
        public var nextKeyID: UInt32
    }

    /// The account as it is to be kept.
    public var state: State {
        State(
            signingKey: Array(signingKey.rawRepresentation), identityKey: Array(identityKey.rawRepresentation),
            oneTimeKeys: oneTimeKeys.keys.sorted().map {
                State.StoredKey(
                    id: $0, key: Array(oneTimeKeys[$0]!.rawRepresentation), published: !unpublished.contains($0))
            },
            fallbackKey: fallback.map {
                State.StoredKey(id: $0.id, key: Array($0.key.rawRepresentation), published: $0.published)
            },
            previousFallbackKey: previousFallback.map {
                State.StoredKey(id: $0.id, key: Array($0.key.rawRepresentation), published: true)
            },
            nextKeyID: nextKeyID)
    }

    /// The account a kept state describes.
    public init(state: State) throws(CryptoError) {
        func agreement(_ bytes: [UInt8]) throws(CryptoError) -> Curve25519.KeyAgreement.PrivateKey {
            guard let key = try? Curve25519.KeyAgreement.PrivateKey(rawRepresentation: bytes) else {
                throw .malformed("a kept Curve25519 key")
            }
            return key
        }
        guard let signing = try? Curve25519.Signing.PrivateKey(rawRepresentation: state.signingKey) else {
            throw .malformed("a kept Ed25519 key")
        }
        self.init(signingKey: signing, identityKey: try agreement(state.identityKey))
        for stored in state.oneTimeKeys {
            oneTimeKeys[stored.id] = try agreement(stored.key)
            if !stored.published { unpublished.insert(stored.id) }
        }
        if let stored = state.fallbackKey { fallback = (stored.id, try agreement(stored.key), stored.published) }
        if let stored = state.previousFallbackKey { previousFallback = (stored.id, try agreement(stored.key)) }
        nextKeyID = state.nextKeyID
    }
}

extension OlmSession {
    /// A session's ratchet as plain bytes.
    public struct State: Codable, Sendable, Equatable {
        /// A sending or receiving chain.
        public struct Chain: Codable, Sendable, Equatable {
            /// Ours: the private ratchet key; theirs: their public one.
            @KeptBytes public var ratchetKey: [UInt8]
            /// The chain key at `index`.
            @KeptBytes public var chainKey: [UInt8]
            /// The chain step of the next message.
            public var index: UInt32
        }

        /// The key of a message that was skipped and may still arrive.
        public struct Skipped: Codable, Sendable, Equatable {
            /// Their ratchet key of the chain the message is on.
            @KeptBytes public var ratchetKey: [UInt8]
            /// The message's chain step.
            public var index: UInt32
            /// The message key, used once and then dropped.
            @KeptBytes public var messageKey: [UInt8]
        }

        /// What a pre-key message carries besides the message.
        public struct PreKeyFields: Codable, Sendable, Equatable {
            /// Their one-time key the session started from.
            @KeptBytes public var oneTimeKey: [UInt8]
            /// Our base key (the 3DH ephemeral).
            @KeptBytes public var baseKey: [UInt8]
            /// Our Curve25519 identity key.
            @KeptBytes public var identityKey: [UInt8]
        }

        /// The session id both sides compute.
        public var sessionID: String
        /// The root key the next chain is derived from.
        @KeptBytes public var rootKey: [UInt8]
        /// Our chain, until the other side answers.
        public var senderChain: Chain?
        /// Their chains, newest first, at most five.
        public var receiverChains: [Chain]
        /// Keys of skipped messages, at most forty.
        public var skippedKeys: [Skipped]
        /// Set until a message from the other side decrypts.
        public var preKey: PreKeyFields?
    }

    /// The session as it is to be kept.
    public var state: State {
        State(
            sessionID: sessionID, rootKey: rootKey,
            senderChain: senderChain.map {
                .init(ratchetKey: Array($0.ratchetKey.rawRepresentation), chainKey: $0.chainKey, index: $0.index)
            },
            receiverChains: receiverChains.map {
                .init(ratchetKey: $0.ratchetKey, chainKey: $0.chainKey, index: $0.index)
            },
            skippedKeys: skippedKeys.map {
                .init(ratchetKey: $0.ratchetKey, index: $0.index, messageKey: $0.messageKey)
            },
            preKey: preKey.map { .init(oneTimeKey: $0.oneTimeKey, baseKey: $0.baseKey, identityKey: $0.identityKey) })
    }

    /// The session a kept state describes.
    public init(state: State) throws(CryptoError) {
        var sender: SenderChain?
        if let chain = state.senderChain {
            guard let key = try? Curve25519.KeyAgreement.PrivateKey(rawRepresentation: chain.ratchetKey) else {
                throw .malformed("a kept ratchet key")
            }
            sender = SenderChain(ratchetKey: key, chainKey: chain.chainKey, index: chain.index)
        }
        self.init(
            sessionID: state.sessionID, rootKey: state.rootKey, senderChain: sender,
            preKey: state.preKey.map {
                PreKey(oneTimeKey: $0.oneTimeKey, baseKey: $0.baseKey, identityKey: $0.identityKey)
            })
        receiverChains = state.receiverChains.map {
            ReceiverChain(ratchetKey: $0.ratchetKey, chainKey: $0.chainKey, index: $0.index)
        }
        skippedKeys = state.skippedKeys.map {
            SkippedKey(ratchetKey: $0.ratchetKey, index: $0.index, messageKey: $0.messageKey)
        }
    }
}
