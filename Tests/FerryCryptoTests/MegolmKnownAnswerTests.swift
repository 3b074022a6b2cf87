import FerryCrypto
import Testing

/// Megolm against values libolm and vodozemac made (generated once with python-olm 3.2.16 and
/// vodozemac 0.10.0; the live comparison runs in Tests/integration/encryption/test_crypto_interop.py).
struct MegolmKnownAnswerTests {
    /// A room key libolm's OutboundGroupSession gave at index 0, and what it encrypted with it.
    static let sessionKey =
        "AgAAAAClqxDGrUFodDsaWbmdtbsK1OaKDfPZ/o64g98MfkEHPE4Oqg9KoT9dhfS3+cJ6o9VSPRP6z1yxrcTd0JcBeYGJWsMp"
        + "KOiLfsJwAJOkPGp/CCAu8z1kpKI11FbiahHCwNlgZm+9+x70gH52nVvvmyzfpQ8GQXolvdoflx4Sinerl+HIi+xmyfmLY51z"
        + "gYuehJtDbd26uBd7tCvqkWAtoDactZwh7QdzXNPtSnkJdDmMBIY8tFWQ1AhEFYjA/YQKbQFpHPlhoUUjuGuwzptoZQUS5/am"
        + "/pxGj1cyueSL4aW9Ag"
    static let sessionID = "4ciL7GbJ+YtjnXOBi56Em0Nt3bq4F3u0K+qRYC2gNpw"
    static let messages: [(ciphertext: String, plaintext: String)] = [
        (
            "AwgAEhCXeD/WRzYe/RjjAGPpgTRGXEzE+TERgl5C8Yf0RgSwtqPTReears8GWfpITVcrQm35MlAhfiiwgYG7u5+aJPJe1Tdg"
                + "FpFlXQ8aywXQNALi2t/XBxKEm1wN",
            "first"
        ),
        (
            "AwgBEhD9UNsBsznSaq2NwL4PJJZ+iog/+Rtce5Or/BHwbFp2wMdDY2YCt/osnJxiyon/jR0OAWcL3GOe+tXZPqgQTt1I1aWc"
                + "xTExazJhV3orAsz/JIhdAHDBgOcN",
            "second ✓"
        ),
        (
            "AwgCEhAkR9RE08Zbjd+4ChGZT3F0pk2F7fdBUG9HsibYMFkq2luMODpDN+pn48yYMIu1IydGUGS8897ibTQMoz7AmKEM014K"
                + "9YnwQQZMs2BzyY2BKqGLms5Um8UH",
            ""
        ),
    ]
    /// vodozemac's `export_at` of the same session: the ratchet across an R3 and an R2 boundary.
    static let exports: [(index: UInt32, exported: String)] = [
        (
            300,
            "AQAAASylqxDGrUFodDsaWbmdtbsK1OaKDfPZ/o64g98MfkEHPE4Oqg9KoT9dhfS3+cJ6o9VSPRP6z1yxrcTd0JcBeYGJc0XS"
                + "oh20CsrTlDdr2lc5HXgqPojQV7LWivUsy1ClCz2rzy2fCLHoDnbJxs8V2BcWVsID23QFz37Lh9pPz9BgGOHIi+xmyfmLY51z"
                + "gYuehJtDbd26uBd7tCvqkWAtoDac"
        ),
        (
            65539,
            "AQABAAOlqxDGrUFodDsaWbmdtbsK1OaKDfPZ/o64g98MfkEHPG32Iyb2gPakS7pxjT3ndm+M7+ZpFmgfegqieux9+WF2RJde"
                + "Akrsri77Bb7o6g93B0pocowG7Z1Y3P+rVhavdheqQCRk8qcsRTlJDQARkvSBJqW7RJbNJLQO25OSw6B8V+HIi+xmyfmLY51z"
                + "gYuehJtDbd26uBd7tCvqkWAtoDac"
        ),
    ]

    @Test func libolmMessagesDecrypt() throws {
        let session = try InboundGroupSession(sessionKey: Self.sessionKey)
        #expect(session.sessionID == Self.sessionID)
        for (index, message) in Self.messages.enumerated() {
            let (plaintext, at) = try session.decrypt(message.ciphertext)
            #expect(String(decoding: plaintext, as: UTF8.self) == message.plaintext)
            #expect(at == UInt32(index))
        }
    }

    @Test func ratchetMatchesVodozemacFarAhead() throws {
        let session = try InboundGroupSession(sessionKey: Self.sessionKey)
        for export in Self.exports {
            #expect(session.export(at: export.index) == export.exported)
        }
    }

    @Test func aRoomKeyWithAChangedByteIsRefused() throws {
        var bytes = UnpaddedBase64.decode(Self.sessionKey)!
        bytes[40] ^= 1
        #expect(throws: CryptoError.self) { try InboundGroupSession(sessionKey: UnpaddedBase64.encode(bytes)) }
        #expect(throws: CryptoError.self) { try InboundGroupSession(sessionKey: "not base64!") }
        #expect(throws: CryptoError.self) { try InboundGroupSession(sessionKey: String(Self.sessionKey.dropLast(4))) }
    }

    @Test func aChangedMessageIsRefused() throws {
        let session = try InboundGroupSession(sessionKey: Self.sessionKey)
        let original = UnpaddedBase64.decode(Self.messages[0].ciphertext)!
        for position in [0, 2, original.count - 70, original.count - 1] {
            var changed = original
            changed[position] ^= 0x10
            #expect(throws: CryptoError.self) { try session.decrypt(UnpaddedBase64.encode(changed)) }
        }
    }
}
