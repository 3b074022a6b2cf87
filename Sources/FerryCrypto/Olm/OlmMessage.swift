/// Olm's two message types, as they travel in `m.room.encrypted`'s `ciphertext` map.
///
/// A normal message (type 1): version 3, the sender's ratchet key (field 1), the chain index
/// (field 2), the ciphertext (field 4), then an 8-byte MAC. A pre-key message (type 0), sent
/// until the other side has answered: version 3, the recipient's one-time key (field 1), the
/// sender's base key (field 2) and identity key (field 3), and the normal message (field 4).
struct OlmMessage: Equatable {
    static let version: UInt8 = 3

    var ratchetKey: [UInt8]
    var chainIndex: UInt32
    var ciphertext: [UInt8]

    /// The encoded fields, without the MAC.
    var fields: [UInt8] {
        var writer = ProtoWriter(version: Self.version)
        writer.data(field: 1, ratchetKey)
        writer.varint(field: 2, UInt64(chainIndex))
        writer.data(field: 4, ciphertext)
        return writer.bytes
    }

    /// Reads a normal message; returns it with the bytes its MAC covers and the MAC.
    static func read(
        _ bytes: [UInt8]
    ) throws(CryptoError) -> (message: OlmMessage, fields: ArraySlice<UInt8>, mac: ArraySlice<UInt8>) {
        guard bytes.count > MessageCipher.macLength + 1 else { throw .malformed("an Olm message shorter than its MAC") }
        let end = bytes.count - MessageCipher.macLength
        let fields = try ProtoFields(bytes[..<end])
        guard fields.version == version else { throw .unsupported("Olm message version \(fields.version)") }
        guard let key = fields.data[1], key.count == 32, let index = fields.varints[2], index <= UInt64(UInt32.max),
            let ciphertext = fields.data[4]
        else { throw .malformed("an Olm message without its ratchet key, index or ciphertext") }
        return (
            OlmMessage(ratchetKey: key, chainIndex: UInt32(index), ciphertext: ciphertext), bytes[..<end], bytes[end...]
        )
    }
}

/// The outer envelope of a pre-key message.
struct OlmPreKeyMessage: Equatable {
    var oneTimeKey: [UInt8]
    var baseKey: [UInt8]
    var identityKey: [UInt8]
    var message: [UInt8]

    var bytes: [UInt8] {
        var writer = ProtoWriter(version: OlmMessage.version)
        writer.data(field: 1, oneTimeKey)
        writer.data(field: 2, baseKey)
        writer.data(field: 3, identityKey)
        writer.data(field: 4, message)
        return writer.bytes
    }

    init(oneTimeKey: [UInt8], baseKey: [UInt8], identityKey: [UInt8], message: [UInt8]) {
        self.oneTimeKey = oneTimeKey
        self.baseKey = baseKey
        self.identityKey = identityKey
        self.message = message
    }

    init(_ bytes: [UInt8]) throws(CryptoError) {
        let fields = try ProtoFields(bytes[...])
        guard fields.version == OlmMessage.version else {
            throw .unsupported("Olm pre-key message version \(fields.version)")
        }
        guard let oneTime = fields.data[1], oneTime.count == 32, let base = fields.data[2], base.count == 32,
            let identity = fields.data[3], identity.count == 32, let inner = fields.data[4]
        else {
            throw .malformed("an Olm pre-key message without its three keys and message")
        }
        self.init(oneTimeKey: oneTime, baseKey: base, identityKey: identity, message: inner)
    }
}
