import Crypto
import FerryCore
import Foundation
import Testing
@testable import FerryCrypto

/// The parts of `m.sas.v1` that two sides could get wrong together: which bits become which emoji
/// and number, libolm's broken base64, the info strings and the commitment. Held to answers from
/// code we did not write; the live exchange with matrix-nio runs in test_sas_interop.py.
struct SasKnownAnswerTests {
    /// The X25519 keys of libolm's own SAS test (matrix-org/olm tests/test_sas.cpp, which took
    /// them from RFC 7748 §6.1), and the public keys that test expects.
    static let alicePrivate: [UInt8] = [
        0x77, 0x07, 0x6D, 0x0A, 0x73, 0x18, 0xA5, 0x7D, 0x3C, 0x16, 0xC1, 0x72, 0x51, 0xB2, 0x66, 0x45,
        0xDF, 0x4C, 0x2F, 0x87, 0xEB, 0xC0, 0x99, 0x2A, 0xB1, 0x77, 0xFB, 0xA5, 0x1D, 0xB9, 0x2C, 0x2A,
    ]
    static let bobPrivate: [UInt8] = [
        0x5D, 0xAB, 0x08, 0x7E, 0x62, 0x4A, 0x8A, 0x4B, 0x79, 0xE1, 0x7F, 0x8B, 0x83, 0x80, 0x0E, 0xE6,
        0x6F, 0x3B, 0xB1, 0x29, 0x26, 0x18, 0xB6, 0xFD, 0x1C, 0x2F, 0x8B, 0x27, 0xFF, 0x88, 0xE0, 0xEB,
    ]
    static let alicePublic = "hSDwCYkwp1R0i33ctD73Wg2/Og0mOBr066SpjqqbTmo"
    static let bobPublic = "3p7bfXt9wbTTW2HC7OQ1Nz+DQ8hbeGdNrfx+FG+IK08"

    static var aliceKeys: SasKeyPair { SasKeyPair(privateKey: try! .init(rawRepresentation: alicePrivate)) }
    static var bobKeys: SasKeyPair { SasKeyPair(privateKey: try! .init(rawRepresentation: bobPrivate)) }

    static let alice = SasParty(
        userID: "@alice:example.org", deviceID: "ALICEDEVICE", ed25519: "nE6W2fCblxDcOFmeEtCHNl8/l8bXcu7GKyAswA4r3mM")
    static let bob = SasParty(
        userID: "@bob:example.org", deviceID: "BOBDEVICE", ed25519: "VyNIf1MOjJr4JbM3bNc3ZRxRO7ArwGEpCkMgvkBNO9k",
        masterKey: "Ws3CmT5KmPtqUyjNK6k4tEsk7OA8qgxDfa6kfG2BJgE")

    // What libolm 3.2.16 (python-olm's Sas, made with the keys above through `_create_sas`) gave
    // for this exchange: Alice starts, Bob accepts, transaction "txn-1". `generate_bytes` with the
    // spec's curve25519-hkdf-sha256 info; `calculate_mac` (hkdf-hmac-sha256, libolm's own base64)
    // and `calculate_mac_fixed_base64` (hkdf-hmac-sha256.v2) with the spec's MAC info.
    static let sasBytes: [UInt8] = [0x70, 0x5B, 0xC7, 0xF9, 0xFA, 0xC9]
    static let aliceMacs: [SasMacMethod: (device: String, keyIDs: String)] = [
        .hkdfHmacSha256: ("epcCQ//XL1ilMWlsTVdsc1RWZHNjMVJXWkhOak1WSlg", "9dMOT5jpanC+bkMrYmtNclltdE5jbGx0ZEU1amJHeDA"),
        .hkdfHmacSha256V2: (
            "epcCdP/XwCilA+WvSG1TI8BoEgQsZ3xcgXfJGVZsBoE", "9dMOf5jpB0S+8oICazyuanRyyXnn26FaGcIlE2McLBo"
        ),
    ]
    static let bobMacs: [SasMacMethod: (device: String, master: String, keyIDs: String)] = [
        .hkdfHmacSha256: (
            "AOY9OQoFb0a3MGEzTUdFelRVZEZlbFJWWkVabGJGSlc", "+pgfZhz4ejTfalRmYWxSbVlXeFNiVmxYZUZOaVZteFk",
            "G076NnGkR2vNMnZOTW5aT1RXNWFUMVJYTldGVU1WSlk"
        ),
        .hkdfHmacSha256V2: (
            "AOY9+AoFGbq3einAZcGOmzf7oH072r12YXOlbibnjNA", "+pgfFxz4SmLfDwjWIIdq7Yxtk1D+m49SorE80Bajs8Y",
            "G076DXGk3dfNmkuQ9QDC3GN540enpIlJkWXhgYdvvOY"
        ),
    ]

    @Test func publicKeysAreLibolms() {
        #expect(Self.aliceKeys.publicKey == Self.alicePublic)
        #expect(Self.bobKeys.publicKey == Self.bobPublic)
    }

    @Test func sasBytesAreLibolms() throws {
        let secret = try Self.aliceKeys.agree(with: Self.bobPublic)
        // libolm's tests/test_sas.cpp info "SAS", 6 bytes (the test compares the two sides only;
        // the value is libolm's output for it).
        #expect(secret.bytes(info: "SAS", count: 6) == [0x39, 0x87, 0xA8, 0x72, 0xE7, 0xB9])
        let info = SasInfo.sas(
            starter: Self.alice, starterKey: Self.alicePublic, accepter: Self.bob, accepterKey: Self.bobPublic,
            transactionID: "txn-1")
        #expect(
            info
                == "MATRIX_KEY_VERIFICATION_SAS|@alice:example.org|ALICEDEVICE|\(Self.alicePublic)"
                + "|@bob:example.org|BOBDEVICE|\(Self.bobPublic)|txn-1"
        )
        #expect(secret.bytes(info: info, count: 6) == Self.sasBytes)
        #expect(try Self.bobKeys.agree(with: Self.alicePublic).bytes(info: info, count: 6) == Self.sasBytes)
        // The other order of the sides is another SAS: the starting side must come first.
        let swapped = SasInfo.sas(
            starter: Self.bob, starterKey: Self.bobPublic, accepter: Self.alice, accepterKey: Self.alicePublic,
            transactionID: "txn-1")
        #expect(secret.bytes(info: swapped, count: 6) != Self.sasBytes)
    }

    @Test func libolmsBase64IsReproduced() throws {
        let secret = try Self.aliceKeys.agree(with: Self.bobPublic)
        // libolm's calculate_mac and calculate_mac_fixed_base64 for "Hello world!" / "MAC" (the
        // inputs of tests/test_sas.cpp) and for empty input and info (vodozemac's libolm test).
        let cases: [(input: String, info: String, old: String, v2: String)] = [
            (
                "Hello world!", "MAC", "2nSMTXM+TStTU3RUVTNSVVZUTlNWVlpVVGxOV1ZscFY",
                "2nSMU3M+FMBTCWQg5IoIUoEErFZOjniAZTdqNhf+Dmo"
            ),
            ("", "", "A9ZaYbG3RzM7ek03ZWswM1pXc3dNMXBYYzNkTk1YQlk", "A9ZahLG38Qw7fU7t8m9n7gc7MLaUwiloA7QE0XouPFw"),
        ]
        for item in cases {
            #expect(SasMacMethod.hkdfHmacSha256.mac(item.input, info: item.info, secret: secret) == item.old)
            #expect(SasMacMethod.hkdfHmacSha256V2.mac(item.input, info: item.info, secret: secret) == item.v2)
            #expect(SasMacMethod.hkdfHmacSha256.isMac(item.old, of: item.input, info: item.info, secret: secret))
            #expect(SasMacMethod.hkdfHmacSha256V2.isMac(item.v2, of: item.input, info: item.info, secret: secret))
            // Each method refuses the other's text: the two are not interchangeable.
            #expect(!SasMacMethod.hkdfHmacSha256.isMac(item.v2, of: item.input, info: item.info, secret: secret))
            #expect(!SasMacMethod.hkdfHmacSha256V2.isMac(item.old, of: item.input, info: item.info, secret: secret))
        }
        // Only the first three bytes are read before the output overwrites them: four characters
        // as base64 has them, then the encoding of a mix of MAC and of its own output.
        let mac = secret.mac("", info: "")
        #expect(SasMacMethod.libolmInPlaceBase64(mac).prefix(4) == UnpaddedBase64.encode(mac).prefix(4))
        #expect(SasMacMethod.libolmInPlaceBase64(mac).count == 43)
        #expect(SasMacMethod.libolmInPlaceBase64(mac) != UnpaddedBase64.encode(mac))
        #expect(SasMacMethod.libolmInPlaceBase64([]) == "")
        #expect(SasMacMethod.libolmInPlaceBase64([0xFF]) == "/w")
    }

    @Test func commitmentIsMatrixRustSdks() {
        // matrix-org/matrix-rust-sdk, crates/matrix-sdk-crypto/src/verification/sas/helpers.rs,
        // test `commitment_calculation`.
        let start: JSONValue = [
            "from_device": "XOWLHHFSWM", "transaction_id": "bYxBsirjUJO9osar6ST4i2M2NjrYLA7l", "method": "m.sas.v1",
            "key_agreement_protocols": ["curve25519-hkdf-sha256", "curve25519"], "hashes": ["sha256"],
            "message_authentication_codes": ["hkdf-hmac-sha256", "hmac-sha256"],
            "short_authentication_string": ["decimal", "emoji"],
        ]
        let key = "Q/NmNFEUS1fS+YeEmiZkjjblKTitrKOAk7cPEumcMlg"
        #expect(SasInfo.commitment(publicKey: key, start: start) == "CCQmB4JCdB0FW21FdAnHj/Hu8+W9+Nb0vgwPEnZZQ4g")
        // Any other key, or any change to the start, is another commitment.
        #expect(
            SasInfo.commitment(publicKey: Self.alicePublic, start: start)
                != "CCQmB4JCdB0FW21FdAnHj/Hu8+W9+Nb0vgwPEnZZQ4g")
        var changed = start.objectValue!
        changed["hashes"] = ["sha256", "sha512"]
        #expect(
            SasInfo.commitment(publicKey: key, start: .object(changed)) != "CCQmB4JCdB0FW21FdAnHj/Hu8+W9+Nb0vgwPEnZZQ4g"
        )
    }

    @Test func bitsBecomeEmojiAndNumbers() throws {
        // vodozemac src/sas.rs tests `emoji_generation` and `decimal_generation`.
        let zero = try #require(ShortAuthenticationString(bytes: [0, 0, 0, 0, 0, 0]))
        #expect(zero.emojiNumbers == [0, 0, 0, 0, 0, 0, 0])
        #expect(zero.decimals == [1000, 1000, 1000])
        let ones = try #require(ShortAuthenticationString(bytes: [UInt8](repeating: 0xFF, count: 6)))
        #expect(ones.emojiNumbers == [63, 63, 63, 63, 63, 63, 63])
        #expect(ones.decimals == [9191, 9191, 9191])
        // The bytes of the libolm exchange, through matrix-nio 0.25's own _generate_emoji and
        // _generate_decimals: 🎂 🐷 🔑 🐰 📁 🤖 ✏️ and 4595 4871 8421.
        let sas = try #require(ShortAuthenticationString(bytes: Self.sasBytes))
        #expect(sas.emojiNumbers == [28, 5, 47, 7, 62, 31, 43])
        #expect(sas.emoji.map(\.emoji) == ["🎂", "🐷", "🔑", "🐰", "📁", "🤖", "✏️"])
        #expect(sas.decimals == [4595, 4871, 8421])
        // One bit apart in each group is another picture and another number.
        let flipped = try #require(ShortAuthenticationString(bytes: [0x70, 0x5B, 0xC7, 0xF9, 0xFA, 0xC8]))
        #expect(flipped.emojiNumbers == sas.emojiNumbers) // the last six bits are never shown
        #expect(
            try #require(ShortAuthenticationString(bytes: [0x71, 0x5B, 0xC7, 0xF9, 0xFA, 0xC9])).emojiNumbers[1] != 5)
        #expect(ShortAuthenticationString(bytes: [1, 2, 3, 4, 5]) == nil)
        #expect(ShortAuthenticationString(bytes: [UInt8](repeating: 0, count: 7)) == nil)
    }

    @Test func theEmojiTableIsTheSpecs() {
        let table = SasEmoji.table
        #expect(table.count == 64)
        #expect(table.map(\.number) == Array(0..<64))
        #expect(Set(table.map(\.emoji)).count == 64)
        #expect(Set(table.map(\.description)).count == 64)
        #expect(table[0].emoji == "🐶" && table[0].description == "Dog")
        #expect(table[21].emoji == "\u{2601}\u{FE0F}" && table[21].description == "Cloud")
        #expect(table[34].description == "Spanner")
        #expect(table[63].emoji == "📌" && table[63].description == "Pin")
    }

    /// The whole exchange through SasVerification with libolm's keys, under each MAC method: both
    /// sides show libolm's SAS, write libolm's MACs byte for byte, and take libolm's.
    @Test(arguments: [SasMacMethod.hkdfHmacSha256V2, .hkdfHmacSha256])
    func theExchangeGivesLibolmsSasAndMacs(method: SasMacMethod) throws {
        // Alice starts; Bob's accept (of her start as sent) is read by Alice with the MAC method
        // under test: the commitment covers the start, not the accept, so she takes it.
        var (alice, start) = SasVerification.start(
            transactionID: "txn-1", us: Self.alice, them: Self.bob, keyPair: Self.aliceKeys)
        var (bob, accept) = try SasVerification.accept(
            start.content, sender: Self.alice.userID, us: Self.bob, them: Self.alice,
            keyPair: Self.bobKeys)
        #expect(
            accept.content["commitment"]?.stringValue
                == SasInfo.commitment(publicKey: Self.bobPublic, start: start.content))
        var chosen = accept.content.objectValue!
        chosen["message_authentication_code"] = .string(method.rawValue)
        let aliceKey = try alice.receive(type: accept.type, content: .object(chosen), sender: Self.bob.userID)
        #expect(aliceKey.map(\.content) == [["transaction_id": "txn-1", "key": .string(Self.alicePublic)]])
        let bobKey = try bob.receive(type: aliceKey[0].type, content: aliceKey[0].content, sender: Self.alice.userID)
        #expect(bobKey.map(\.content) == [["transaction_id": "txn-1", "key": .string(Self.bobPublic)]])
        #expect(try alice.receive(type: bobKey[0].type, content: bobKey[0].content, sender: Self.bob.userID).isEmpty)
        #expect(alice.shortAuthenticationString?.bytes == Self.sasBytes)
        #expect(bob.shortAuthenticationString?.bytes == Self.sasBytes)

        let aliceMac = try #require(alice.confirm().first)
        let expectedAlice = try #require(Self.aliceMacs[method])
        #expect(
            aliceMac.content == [
                "transaction_id": "txn-1", "mac": ["ed25519:ALICEDEVICE": .string(expectedAlice.device)],
                "keys": .string(expectedAlice.keyIDs),
            ])
        // Bob's MACs as libolm wrote them (his device and master key) are taken by Alice.
        let expectedBob = try #require(Self.bobMacs[method])
        let bobMacContent: JSONValue = [
            "transaction_id": "txn-1", "keys": .string(expectedBob.keyIDs),
            "mac": [
                "ed25519:BOBDEVICE": .string(expectedBob.device),
                "ed25519:\(Self.bob.masterKey!)": .string(expectedBob.master),
            ],
        ]
        #expect(
            try alice.receive(type: VerificationMessage.mac, content: bobMacContent, sender: Self.bob.userID)
                == [VerificationMessage.done(transactionID: "txn-1")])
        #expect(alice.phase == .done)
        #expect(alice.verifiedMasterKey == Self.bob.masterKey)

        // Bob accepting a start that offers only this method writes libolm's MACs too, and takes Alice's.
        var offer = start.content.objectValue!
        offer["message_authentication_codes"] = [.string(method.rawValue)]
        var (bobOnly, acceptOnly) = try SasVerification.accept(
            .object(offer), sender: Self.alice.userID, us: Self.bob, them: Self.alice,
            keyPair: Self.bobKeys)
        #expect(acceptOnly.content["message_authentication_code"]?.stringValue == method.rawValue)
        _ = try bobOnly.receive(
            type: VerificationMessage.key, content: ["transaction_id": "txn-1", "key": .string(Self.alicePublic)],
            sender: Self.alice.userID)
        #expect(try bobOnly.receive(type: aliceMac.type, content: aliceMac.content, sender: Self.alice.userID).isEmpty)
        let bobMessages = bobOnly.confirm()
        #expect(
            bobMessages == [
                VerificationMessage(type: VerificationMessage.mac, content: bobMacContent),
                VerificationMessage.done(transactionID: "txn-1"),
            ])
        #expect(bobOnly.phase == .done)
        #expect(bobOnly.verifiedMasterKey == nil) // Bob holds no master key for Alice
    }
}

/// The verification as a state machine, between two of our own sides: the order of messages,
/// what each side trusts at the end, and every refusal of hostile or broken input.
struct SasVerificationTests {
    static let ana = SasParty(userID: "@ana:x", deviceID: "ANA", ed25519: key(), masterKey: key())
    static let ben = SasParty(userID: "@ben:y", deviceID: "BEN", ed25519: key(), masterKey: key())

    static func key() -> String { UnpaddedBase64.encode(Curve25519.Signing.PrivateKey().publicKey.rawRepresentation) }

    /// Ana and Ben with their keys exchanged (Ana started), and the messages that went by.
    struct Exchange {
        var ana: SasVerification
        var ben: SasVerification
        var start: VerificationMessage
        var accept: VerificationMessage
        var anaKey: VerificationMessage
        var benKey: VerificationMessage
    }

    static func exchange(
        ana anaParty: SasParty = ana, ben benParty: SasParty = ben,
        anaSeesBen: SasParty? = nil, benSeesAna: SasParty? = nil
    ) throws -> Exchange {
        var (ana, start) = SasVerification.start(transactionID: "t1", us: anaParty, them: anaSeesBen ?? benParty)
        var (ben, accept) = try SasVerification.accept(
            start.content, sender: anaParty.userID, us: benParty, them: benSeesAna ?? anaParty)
        let anaKey = try #require(
            ana.receive(type: accept.type, content: accept.content, sender: benParty.userID).first)
        let benKey = try #require(
            ben.receive(type: anaKey.type, content: anaKey.content, sender: anaParty.userID).first)
        #expect(try ana.receive(type: benKey.type, content: benKey.content, sender: benParty.userID).isEmpty)
        return Exchange(ana: ana, ben: ben, start: start, accept: accept, anaKey: anaKey, benKey: benKey)
    }

    /// The cancel code a step threw, or nil when it did not throw.
    static func cancelCode(_ step: () throws -> Void) -> VerificationCancel.Code? {
        do {
            try step()
        } catch let cancel as VerificationCancel {
            return cancel.code
        } catch {
            Issue.record("a step threw something other than a cancel: \(error)")
        }
        return nil
    }

    @Test func bothSidesShowTheSameSasAndVerifyEachOther() throws {
        var run = try Self.exchange()
        #expect(run.ana.phase == .comparing && run.ben.phase == .comparing)
        let sas = try #require(run.ana.shortAuthenticationString)
        #expect(run.ben.shortAuthenticationString == sas)
        #expect(run.ana.shortAuthenticationMethods == ["decimal", "emoji"])

        let anaMac = run.ana.confirm()
        #expect(anaMac.map(\.type) == [VerificationMessage.mac])
        #expect(run.ana.phase == .awaitingMac)
        #expect(run.ana.confirm().isEmpty) // a second click sends nothing
        // Ben's person has not confirmed yet: Ana's MAC holds, but Ben is not done.
        #expect(try run.ben.receive(type: anaMac[0].type, content: anaMac[0].content, sender: Self.ana.userID).isEmpty)
        #expect(run.ben.phase == .comparing)
        #expect(run.ben.verifiedMasterKey == nil) // nothing counts before the end
        let benMessages = run.ben.confirm()
        #expect(benMessages.map(\.type) == [VerificationMessage.mac, VerificationMessage.done])
        #expect(run.ben.phase == .done)
        #expect(run.ben.verifiedMasterKey == Self.ana.masterKey)
        #expect(
            try run.ana.receive(type: benMessages[0].type, content: benMessages[0].content, sender: Self.ben.userID)
                == [VerificationMessage.done(transactionID: "t1")])
        #expect(run.ana.phase == .done)
        #expect(run.ana.verifiedMasterKey == Self.ben.masterKey)
        #expect(
            try run.ana.receive(type: benMessages[1].type, content: benMessages[1].content, sender: Self.ben.userID)
                .isEmpty)
        #expect(run.ana.theyAreDone)
        // Nothing ends a finished verification.
        #expect(run.ana.cancel(.user, reason: "late") == nil)
        #expect(run.ana.phase == .done)
    }

    @Test func aMacThatHeldCountsForNothingWhenThePersonSaysTheSasDiffers() throws {
        var run = try Self.exchange()
        let anaMac = run.ana.confirm()[0]
        #expect(try run.ben.receive(type: anaMac.type, content: anaMac.content, sender: Self.ana.userID).isEmpty)
        let cancel = run.ben.cancel(.mismatchedSas, reason: "different emoji")
        #expect(cancel?.content["code"] == "m.mismatched_sas")
        #expect(run.ben.confirm().isEmpty)
        #expect(run.ben.phase == .cancelledByUs(VerificationCancel(.mismatchedSas, "different emoji")))
        #expect(run.ben.verifiedMasterKey == nil)
    }

    @Test func aMasterKeyWeDoNotHoldIsNotTrusted() throws {
        // Ana does not send a master key MAC; Ben holds none for Ana: device only.
        let anaWithout = SasParty(userID: Self.ana.userID, deviceID: Self.ana.deviceID, ed25519: Self.ana.ed25519)
        var run = try Self.exchange(ana: anaWithout, benSeesAna: anaWithout)
        let anaMac = run.ana.confirm()[0]
        #expect(anaMac.content["mac"]?.objectValue?.keys.sorted() == ["ed25519:ANA"])
        _ = try run.ben.receive(type: anaMac.type, content: anaMac.content, sender: Self.ana.userID)
        _ = run.ben.confirm()
        #expect(run.ben.phase == .done)
        #expect(run.ben.verifiedMasterKey == nil)
        // Ben sends a master key MAC, but Ana holds another master key for Ben: that MAC is over
        // a key she does not know, so it is skipped, and the device is still verified.
        let benAsAnaKnowsHim = SasParty(
            userID: Self.ben.userID, deviceID: Self.ben.deviceID, ed25519: Self.ben.ed25519, masterKey: Self.key())
        var other = try Self.exchange(anaSeesBen: benAsAnaKnowsHim)
        let benMac = other.ben.confirm()[0]
        _ = other.ana.confirm()
        #expect(
            try other.ana.receive(type: benMac.type, content: benMac.content, sender: Self.ben.userID).map(\.type) == [
                VerificationMessage.done
            ])
        #expect(other.ana.verifiedMasterKey == nil)
    }

    @Test func theAcceptingSideAnswersTheBestItShares() throws {
        var start = SasStart.ours(transactionID: "t1", fromDevice: "ANA").objectValue!
        func accepted(_ edit: (inout [String: JSONValue]) -> Void) throws -> JSONValue {
            var content = start
            edit(&content)
            return try SasVerification.accept(.object(content), sender: Self.ana.userID, us: Self.ben, them: Self.ana).1
                .content
        }
        #expect(try accepted { _ in }["message_authentication_code"] == "hkdf-hmac-sha256.v2")
        // nio's offer: the old MAC and the long-KDF one it also speaks, emoji before decimal.
        let nio = try accepted {
            $0["message_authentication_codes"] = ["hkdf-hmac-sha256", "hmac-sha256"]
            $0["key_agreement_protocols"] = ["curve25519", "curve25519-hkdf-sha256"]
            $0["short_authentication_string"] = ["emoji", "decimal"]
            $0["unknown_field"] = ["kept": true]
        }
        #expect(nio["message_authentication_code"] == "hkdf-hmac-sha256")
        #expect(nio["key_agreement_protocol"] == "curve25519-hkdf-sha256")
        #expect(nio["short_authentication_string"] == ["decimal", "emoji"])
        #expect(
            try accepted { $0["short_authentication_string"] = ["decimal", "qr"] }["short_authentication_string"] == [
                "decimal"
            ])
        start["transaction_id"] = "t2"
        #expect(try accepted { _ in }["transaction_id"] == "t2")
    }

    @Test func aStartWithNothingInCommonOrMalformedIsRefused() {
        let start = SasStart.ours(transactionID: "t1", fromDevice: "ANA").objectValue!
        func code(_ edit: (inout [String: JSONValue]) -> Void) -> VerificationCancel.Code? {
            var content = start
            edit(&content)
            return Self.cancelCode {
                _ = try SasVerification.accept(.object(content), sender: Self.ana.userID, us: Self.ben, them: Self.ana)
            }
        }
        #expect(code { _ in } == nil)
        #expect(code { $0["method"] = "m.reciprocate.v1" } == .unknownMethod)
        #expect(code { $0["key_agreement_protocols"] = ["curve25519"] } == .unknownMethod)
        #expect(code { $0["hashes"] = ["sha512"] } == .unknownMethod)
        #expect(code { $0["message_authentication_codes"] = ["hmac-sha256"] } == .unknownMethod)
        #expect(code { $0["short_authentication_string"] = ["qr"] } == .unknownMethod)
        #expect(code { $0["short_authentication_string"] = [] } == .unknownMethod)
        #expect(code { $0["from_device"] = nil } == .invalidMessage)
        #expect(code { $0["transaction_id"] = 7 } == .invalidMessage)
        #expect(code { $0["transaction_id"] = .string(String(repeating: "t", count: 256)) } == .invalidMessage)
        #expect(code { $0["method"] = nil } == .invalidMessage)
        #expect(code { $0["hashes"] = "sha256" } == .invalidMessage)
        #expect(code { $0["hashes"] = ["sha256", 1] } == .invalidMessage)
        #expect(code { $0["hashes"] = .array(Array(repeating: "sha256", count: 65)) } == .invalidMessage)
        #expect(
            Self.cancelCode {
                _ = try SasVerification.accept(
                    ["not": "a start"], sender: Self.ana.userID, us: Self.ben, them: Self.ana)
            }
                == .invalidMessage)
        #expect(
            Self.cancelCode {
                _ = try SasVerification.accept("text", sender: Self.ana.userID, us: Self.ben, them: Self.ana)
            } == .invalidMessage)
        // A start from another device or user than the one to verify
        #expect(code { $0["from_device"] = "EVE" } == .userMismatch)
        #expect(
            Self.cancelCode {
                _ = try SasVerification.accept(.object(start), sender: "@eve:x", us: Self.ben, them: Self.ana)
            } == .userMismatch)
    }

    @Test func anAcceptThatChoseWhatWasNotOfferedIsRefused() throws {
        func code(_ edit: (inout [String: JSONValue]) -> Void) throws -> VerificationCancel.Code? {
            var (ana, start) = SasVerification.start(transactionID: "t1", us: Self.ana, them: Self.ben)
            var accept = try SasVerification.accept(
                start.content, sender: Self.ana.userID, us: Self.ben, them: Self.ana
            ).1.content.objectValue!
            edit(&accept)
            let code = Self.cancelCode {
                _ = try ana.receive(type: VerificationMessage.accept, content: .object(accept), sender: Self.ben.userID)
            }
            #expect((code == nil) == (ana.phase == .awaitingKey))
            return code
        }
        #expect(try code { _ in } == nil)
        #expect(try code { $0["key_agreement_protocol"] = "curve25519" } == .unknownMethod)
        #expect(try code { $0["hash"] = "sha512" } == .unknownMethod)
        #expect(try code { $0["message_authentication_code"] = "hmac-sha256" } == .unknownMethod)
        #expect(try code { $0["short_authentication_string"] = ["decimal", "qr"] } == .unknownMethod)
        #expect(try code { $0["short_authentication_string"] = [] } == .unknownMethod)
        #expect(try code { $0["commitment"] = nil } == .invalidMessage)
        #expect(try code { $0["hash"] = 256 } == .invalidMessage)
    }

    @Test func aKeyOtherThanTheOneCommittedToIsRefused() throws {
        // The accept commits to one key; a man in the middle sends another.
        var (ana, start) = SasVerification.start(transactionID: "t1", us: Self.ana, them: Self.ben)
        let (_, accept) = try SasVerification.accept(
            start.content, sender: Self.ana.userID, us: Self.ben, them: Self.ana)
        _ = try ana.receive(type: accept.type, content: accept.content, sender: Self.ben.userID)
        let other = SasKeyPair().publicKey
        #expect(
            Self.cancelCode {
                _ = try ana.receive(
                    type: VerificationMessage.key, content: ["transaction_id": "t1", "key": .string(other)],
                    sender: Self.ben.userID)
            } == .mismatchedCommitment)
        guard case .cancelledByUs(let cancel) = ana.phase else { Issue.record("not cancelled: \(ana.phase)"); return }
        #expect(cancel.code == .mismatchedCommitment)
        #expect(cancel.message(transactionID: "t1").content["code"] == "m.mismatched_commitment")

        // A commitment changed on the way is refused the same way.
        var (ana2, start2) = SasVerification.start(transactionID: "t1", us: Self.ana, them: Self.ben)
        var (ben2, accept2) = try SasVerification.accept(
            start2.content, sender: Self.ana.userID, us: Self.ben, them: Self.ana)
        var tampered = accept2.content.objectValue!
        tampered["commitment"] = .string(SasInfo.commitment(publicKey: other, start: start2.content))
        let anaKey = try ana2.receive(type: accept2.type, content: .object(tampered), sender: Self.ben.userID)[0]
        let benKey = try ben2.receive(type: anaKey.type, content: anaKey.content, sender: Self.ana.userID)[0]
        #expect(
            Self.cancelCode {
                _ = try ana2.receive(type: benKey.type, content: benKey.content, sender: Self.ben.userID)
            } == .mismatchedCommitment)
    }

    @Test func aSwappedKeyGivesAnotherSasAndMacsThatFail() throws {
        // A man in the middle gives Ben his own key in place of Ana's (Ben, accepting, has no
        // commitment to check it against): the people see different emoji, and if they confirm
        // anyway, the MACs do not hold.
        var (ana, start) = SasVerification.start(transactionID: "t1", us: Self.ana, them: Self.ben)
        var (ben, accept) = try SasVerification.accept(
            start.content, sender: Self.ana.userID, us: Self.ben, them: Self.ana)
        let anaKey = try ana.receive(type: accept.type, content: accept.content, sender: Self.ben.userID)[0]
        let mallory = SasKeyPair()
        let benKey = try ben.receive(
            type: anaKey.type, content: ["transaction_id": "t1", "key": .string(mallory.publicKey)],
            sender: Self.ana.userID)[0]
        _ = try ana.receive(type: benKey.type, content: benKey.content, sender: Self.ben.userID)
        #expect(ana.phase == .comparing && ben.phase == .comparing)
        #expect(ana.shortAuthenticationString != ben.shortAuthenticationString)
        let anaMac = ana.confirm()[0], benMac = ben.confirm()[0]
        #expect(
            Self.cancelCode { _ = try ben.receive(type: anaMac.type, content: anaMac.content, sender: Self.ana.userID) }
                == .keyMismatch)
        #expect(
            Self.cancelCode { _ = try ana.receive(type: benMac.type, content: benMac.content, sender: Self.ben.userID) }
                == .keyMismatch)
        #expect(ana.phase != .done && ben.phase != .done)
    }

    @Test func aTamperedMacIsRefused() throws {
        func code(
            _ edit: (inout [String: JSONValue], SasParty) -> Void
        ) throws -> (VerificationCancel.Code?, SasVerification.Phase) {
            var run = try Self.exchange()
            var mac = run.ana.confirm()[0].content.objectValue!
            edit(&mac, Self.ana)
            let code = Self.cancelCode {
                _ = try run.ben.receive(type: VerificationMessage.mac, content: .object(mac), sender: Self.ana.userID)
            }
            return (code, run.ben.phase)
        }
        let master = "ed25519:\(Self.ana.masterKey!)"
        #expect(try code { _, _ in }.0 == nil)
        // One bit of the device key's MAC
        #expect(
            try code { mac, _ in
                var macs = mac["mac"]!.objectValue!
                var bytes = UnpaddedBase64.decode(macs["ed25519:ANA"]!.stringValue!)!
                bytes[0] ^= 1
                macs["ed25519:ANA"] = .string(UnpaddedBase64.encode(bytes))
                mac["mac"] = .object(macs)
            }.0 == .keyMismatch)
        // The master key's MAC swapped for the device key's
        #expect(
            try code { mac, _ in
                var macs = mac["mac"]!.objectValue!
                macs[master] = macs["ed25519:ANA"]
                mac["mac"] = .object(macs)
            }.0 == .keyMismatch)
        // A key dropped from the message: the list of ids no longer matches its MAC
        #expect(
            try code { mac, _ in
                var macs = mac["mac"]!.objectValue!
                macs[master] = nil
                mac["mac"] = .object(macs)
            }.0 == .keyMismatch)
        // The list's MAC changed, or missing, or the MACs not strings, or none, or too many
        #expect(
            try code { mac, _ in mac["keys"] = .string(UnpaddedBase64.encode([UInt8](repeating: 0, count: 32))) }.0
                == .keyMismatch)
        #expect(try code { mac, _ in mac["keys"] = nil }.0 == .invalidMessage)
        #expect(try code { mac, _ in mac["mac"] = ["ed25519:ANA": 1] }.0 == .invalidMessage)
        #expect(try code { mac, _ in mac["mac"] = [:] }.0 == .invalidMessage)
        #expect(
            try code { mac, _ in
                mac["mac"] = .object(Dictionary(uniqueKeysWithValues: (0..<33).map { ("ed25519:K\($0)", "x") }))
            }.0
                == .invalidMessage)
        let (refused, phase) = try code { mac, _ in mac["keys"] = "AAAA" }
        #expect(refused == .keyMismatch)
        if case .cancelledByUs = phase {} else { Issue.record("a refused MAC left the verification \(phase)") }
    }

    @Test func aMacWithoutTheDeviceKeyVerifiesNothing() throws {
        // Only the master key MACed, with its list, by a side that holds the secret: every MAC
        // holds, but the device being verified is not among them.
        var (ana, start) = SasVerification.start(
            transactionID: "t2", us: Self.ana, them: Self.ben, keyPair: SasKnownAnswerTests.aliceKeys)
        var (ben, accept) = try SasVerification.accept(
            start.content, sender: Self.ana.userID, us: Self.ben, them: Self.ana,
            keyPair: SasKnownAnswerTests.bobKeys)
        let anaKey = try ana.receive(type: accept.type, content: accept.content, sender: Self.ben.userID)[0]
        _ = try ben.receive(type: anaKey.type, content: anaKey.content, sender: Self.ana.userID)
        let secret = try SasKnownAnswerTests.aliceKeys.agree(with: SasKnownAnswerTests.bobPublic)
        let info = SasInfo.mac(sender: Self.ana, receiver: Self.ben, transactionID: "t2")
        let masterID = "ed25519:\(Self.ana.masterKey!)"
        func macs(_ ids: [String: String]) -> JSONValue {
            var out: [String: JSONValue] = [:]
            for (id, key) in ids {
                out[id] = .string(SasMacMethod.hkdfHmacSha256V2.mac(key, info: info + id, secret: secret))
            }
            return [
                "transaction_id": "t2", "mac": .object(out),
                "keys": .string(
                    SasMacMethod.hkdfHmacSha256V2.mac(
                        SasInfo.keyIDs(ids.keys), info: info + "KEY_IDS", secret: secret)),
            ]
        }
        var copy = ben
        #expect(
            Self.cancelCode {
                _ = try ben.receive(
                    type: VerificationMessage.mac, content: macs([masterID: Self.ana.masterKey!]),
                    sender: Self.ana.userID)
            } == .keyMismatch)
        // The same hand-made MAC with the device key in it holds: the refusal was for the device.
        #expect(
            Self.cancelCode {
                _ = try copy.receive(
                    type: VerificationMessage.mac,
                    content: macs([masterID: Self.ana.masterKey!, "ed25519:ANA": Self.ana.ed25519]),
                    sender: Self.ana.userID)
            } == nil)
        _ = copy.confirm()
        #expect(copy.phase == .done && copy.verifiedMasterKey == Self.ana.masterKey)
    }

    @Test func strangersAndOtherTransactionsCannotEndIt() throws {
        var run = try Self.exchange()
        let cancel: JSONValue = ["transaction_id": "t1", "code": "m.user", "reason": "bye"]
        #expect(
            Self.cancelCode {
                _ = try run.ana.receive(type: VerificationMessage.cancel, content: cancel, sender: "@eve:x")
            } == .userMismatch)
        #expect(
            Self.cancelCode {
                _ = try run.ana.receive(
                    type: VerificationMessage.cancel, content: ["transaction_id": "t9", "code": "m.user"],
                    sender: Self.ben.userID)
            } == .unknownTransaction)
        #expect(
            Self.cancelCode {
                _ = try run.ana.receive(
                    type: VerificationMessage.mac, content: ["code": "m.user"], sender: Self.ben.userID)
            }
                == .unknownTransaction)
        #expect(run.ana.phase == .comparing)
        // From Ben, for this transaction, it ends it; later messages are ignored, never answered.
        #expect(try run.ana.receive(type: VerificationMessage.cancel, content: cancel, sender: Self.ben.userID).isEmpty)
        #expect(run.ana.phase == .cancelledByThem(VerificationCancel(.user, "bye")))
        #expect(
            try run.ana.receive(type: VerificationMessage.key, content: run.benKey.content, sender: Self.ben.userID)
                .isEmpty)
        #expect(run.ana.confirm().isEmpty)
        #expect(run.ana.cancel(.user, reason: "me too") == nil)
    }

    @Test func messagesOutOfOrderEndIt() throws {
        func code(_ type: String, _ content: JSONValue, ana: Bool = true) throws -> VerificationCancel.Code? {
            var (anaSide, start) = SasVerification.start(transactionID: "t1", us: Self.ana, them: Self.ben)
            var (benSide, _) = try SasVerification.accept(
                start.content, sender: Self.ana.userID, us: Self.ben, them: Self.ana)
            return ana
                ? Self.cancelCode { _ = try anaSide.receive(type: type, content: content, sender: Self.ben.userID) }
                : Self.cancelCode { _ = try benSide.receive(type: type, content: content, sender: Self.ana.userID) }
        }
        let key: JSONValue = ["transaction_id": "t1", "key": .string(SasKeyPair().publicKey)]
        #expect(try code(VerificationMessage.key, key) == .unexpectedMessage) // before the accept
        #expect(
            try code(VerificationMessage.mac, ["transaction_id": "t1", "mac": [:], "keys": ""]) == .unexpectedMessage)
        #expect(try code(VerificationMessage.done, ["transaction_id": "t1"]) == .unexpectedMessage)
        #expect(try code("m.key.verification.unheard_of", ["transaction_id": "t1"]) == .unexpectedMessage)
        // The accepting side:
        #expect(try code(VerificationMessage.accept, ["transaction_id": "t1"], ana: false) == .unexpectedMessage)
        #expect(try code(VerificationMessage.key, key, ana: false) == nil)

        var run = try Self.exchange()
        #expect(
            Self.cancelCode {
                _ = try run.ben.receive(
                    type: VerificationMessage.key, content: run.anaKey.content, sender: Self.ana.userID)
            }
                == .unexpectedMessage) // a second key
        #expect(
            run.ben.phase
                == .cancelledByUs(VerificationCancel(.unexpectedMessage, "m.key.verification.key out of order")))
    }

    @Test func keysThatAreNotKeysAreRefused() throws {
        func code(_ key: JSONValue?) throws -> VerificationCancel.Code? {
            let (_, start) = SasVerification.start(transactionID: "t1", us: Self.ana, them: Self.ben)
            var (ben, _) = try SasVerification.accept(
                start.content, sender: Self.ana.userID, us: Self.ben, them: Self.ana)
            var content: [String: JSONValue] = ["transaction_id": "t1"]
            content["key"] = key
            return Self.cancelCode {
                _ = try ben.receive(type: VerificationMessage.key, content: .object(content), sender: Self.ana.userID)
            }
        }
        let good = SasKeyPair().publicKey
        #expect(try code(.string(good)) == nil)
        #expect(try code(nil) == .invalidMessage)
        #expect(try code(7) == .invalidMessage)
        #expect(try code(.string(good + "=")) == .invalidMessage) // padded: another string than the one hashed
        #expect(try code(.string(String(good.dropLast(2)))) == .invalidMessage) // too short
        #expect(try code(.string(UnpaddedBase64.encode([UInt8](repeating: 1, count: 33)))) == .invalidMessage)
        #expect(try code("not base64 at all!") == .invalidMessage)
        // A low-order point: the all-zero secret, known to anyone
        #expect(try code(.string(UnpaddedBase64.encode([UInt8](repeating: 0, count: 32)))) == .invalidMessage)
        // Non-zero bits past the 256th: decodes to the same 32 bytes, but is another string
        var last = Array(good)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
        last[last.count - 1] = alphabet[(alphabet.firstIndex(of: last.last!)! & ~3) | 1]
        #expect(try code(.string(String(last))) == .invalidMessage)
    }

    @Test func theSmallerUserWinsWhenBothStart() throws {
        // Ana (@ana:x < @ben:y) and Ben both start in one transaction.
        var (ana, anaStart) = SasVerification.start(transactionID: "t1", us: Self.ana, them: Self.ben)
        var (ben, benStart) = SasVerification.start(transactionID: "t1", us: Self.ben, them: Self.ana)
        #expect(try ana.receive(type: benStart.type, content: benStart.content, sender: Self.ben.userID).isEmpty)
        #expect(ana.phase == .awaitingAccept && ana.weStarted)
        let accept = try ben.receive(type: anaStart.type, content: anaStart.content, sender: Self.ana.userID)
        #expect(accept.map(\.type) == [VerificationMessage.accept])
        #expect(!ben.weStarted && ben.phase == .awaitingKey)
        let anaKey = try ana.receive(type: accept[0].type, content: accept[0].content, sender: Self.ben.userID)[0]
        let benKey = try ben.receive(type: anaKey.type, content: anaKey.content, sender: Self.ana.userID)[0]
        _ = try ana.receive(type: benKey.type, content: benKey.content, sender: Self.ben.userID)
        #expect(ana.shortAuthenticationString != nil && ana.shortAuthenticationString == ben.shortAuthenticationString)
        // For one user, the smaller device id wins.
        let laptop = SasParty(userID: "@ana:x", deviceID: "AAA", ed25519: Self.key())
        let phone = SasParty(userID: "@ana:x", deviceID: "BBB", ed25519: Self.key())
        #expect(laptop.precedes(phone) && !phone.precedes(laptop))
        // Starts for different methods cannot be reconciled.
        var (ana2, _) = SasVerification.start(transactionID: "t1", us: Self.ana, them: Self.ben)
        var qr = benStart.content.objectValue!
        qr["method"] = "m.reciprocate.v1"
        #expect(
            Self.cancelCode {
                _ = try ana2.receive(type: VerificationMessage.start, content: .object(qr), sender: Self.ben.userID)
            }
                == .unexpectedMessage)
    }

    @Test func ourCancelsAndTheirs() throws {
        var run = try Self.exchange()
        let sent = run.ana.cancel(.mismatchedSas, reason: "the emoji differ")
        let cancel = try #require(sent)
        #expect(
            cancel
                == VerificationMessage(
                    type: VerificationMessage.cancel,
                    content: ["transaction_id": "t1", "code": "m.mismatched_sas", "reason": "the emoji differ"]))
        #expect(run.ana.cancel(.user, reason: "again") == nil)
        _ = try run.ben.receive(type: cancel.type, content: cancel.content, sender: Self.ana.userID)
        #expect(run.ben.phase == .cancelledByThem(VerificationCancel(.mismatchedSas, "the emoji differ")))
        // A cancel of a code nobody knows, or with no code, still ends it; the reason is cut short.
        #expect(
            VerificationCancel(reading: [
                "code": "org.example.odd", "reason": .string(String(repeating: "r", count: 1000)),
            ])
                == VerificationCancel(.init(rawValue: "org.example.odd"), String(repeating: "r", count: 255)))
        #expect(VerificationCancel(reading: ["reason": "no code"]) == nil)
        var other = try Self.exchange()
        _ = try other.ben.receive(
            type: VerificationMessage.cancel, content: ["transaction_id": "t1"], sender: Self.ana.userID)
        #expect(other.ben.phase == .cancelledByThem(VerificationCancel(.invalidMessage, "a cancel without a code")))
    }

    @Test func requestsAndReadies() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let request = VerificationRequest.request(transactionID: "t1", fromDevice: "ANA", now: now)
        #expect(
            request.content == [
                "transaction_id": "t1", "from_device": "ANA", "methods": ["m.sas.v1"], "timestamp": 1_800_000_000_000,
            ])
        let read = try #require(VerificationRequest(reading: request.content, now: now.addingTimeInterval(60)))
        #expect(read.transactionID == "t1" && read.fromDevice == "ANA" && read.offersSas)
        // Too old, too far ahead, malformed: ignored.
        #expect(VerificationRequest(reading: request.content, now: now.addingTimeInterval(10 * 60 + 1)) == nil)
        #expect(VerificationRequest(reading: request.content, now: now.addingTimeInterval(-5 * 60 - 1)) == nil)
        #expect(VerificationRequest(reading: request.content, now: now.addingTimeInterval(-5 * 60 + 1)) != nil)
        var noTime = request.content.objectValue!
        noTime["timestamp"] = nil
        #expect(VerificationRequest(reading: .object(noTime), now: now) == nil)
        var qrOnly = request.content.objectValue!
        qrOnly["methods"] = ["m.qr_code.show.v1"]
        #expect(VerificationRequest(reading: .object(qrOnly), now: now)?.offersSas == false)
        let ready = VerificationRequest.ready(transactionID: "t1", fromDevice: "BEN")
        #expect(VerificationRequest(readingReady: ready.content)?.fromDevice == "BEN")
        #expect(VerificationRequest(readingReady: ["transaction_id": "t1", "methods": ["m.sas.v1"]]) == nil)
        #expect(
            SasVerification.newTransactionID().count == 32
                && SasVerification.newTransactionID() != SasVerification.newTransactionID())
    }
}
