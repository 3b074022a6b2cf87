import Crypto
import FerryCore
import Testing
@testable import FerryCrypto

/// Recovery keys as people type them, and secret storage's key check and secrets. The formats
/// are checked against a client we did not write in the integration tests
/// (test_verify_device.py); these are the rules, with hostile input.
struct RecoveryKeyTests {
    let bytes = (0..<32).map { UInt8($0 * 7 & 0xFF) }

    @Test func aKeyReadsBackFromHowItIsShown() throws {
        let shown = RecoveryKey(key: SymmetricKey(data: bytes)).encoded
        #expect(shown.hasPrefix("Es"))
        #expect(Array(shown).split(separator: Character(" ")).dropLast().allSatisfy { $0.count == 4 })
        #expect(try RecoveryKey(decoding: shown).bytes == bytes)
        // Pasted without spaces, or across lines
        #expect(try RecoveryKey(decoding: shown.replacingOccurrences(of: " ", with: "")).bytes == bytes)
        #expect(
            try RecoveryKey(decoding: "  " + shown.replacingOccurrences(of: " ", with: "\n") + "\n").bytes == bytes)
    }

    @Test func base58KeepsLeadingZeros() {
        #expect(Base58.encode([0, 0, 1]) == "112")
        #expect((try? Base58.decode("112").get()) == [0, 0, 1])
        #expect(Base58.encode([]) == "")
    }

    @Test func everyMistypedCharacterIsCaught() throws {
        let shown = Array(RecoveryKey(key: SymmetricKey(data: bytes)).encoded.replacingOccurrences(of: " ", with: ""))
        for index in shown.indices {
            for replacement in ["2", "z", "E"] where Character(replacement) != shown[index] {
                var typo = shown
                typo[index] = Character(replacement)
                #expect(throws: RecoveryKey.Problem.self) { try RecoveryKey(decoding: String(typo)) }
            }
        }
    }

    @Test func eachProblemIsSaidForWhatItIs() {
        let shown = RecoveryKey(key: SymmetricKey(data: bytes)).encoded
        #expect(throws: RecoveryKey.Problem.empty) { try RecoveryKey(decoding: " \n") }
        #expect(throws: RecoveryKey.Problem.notBase58("0")) { try RecoveryKey(decoding: "Es0" + shown.dropFirst(3)) }
        #expect(throws: RecoveryKey.Problem.wrongLength) { try RecoveryKey(decoding: String(shown.dropLast(5))) }
        #expect(throws: RecoveryKey.Problem.wrongLength) { try RecoveryKey(decoding: shown + shown) }
        // The right length and parity, another prefix
        var other: [UInt8] = [0x8B, 0x02] + bytes
        other.append(other.reduce(0, ^))
        #expect(throws: RecoveryKey.Problem.notARecoveryKey) { try RecoveryKey(decoding: Base58.encode(other)) }
        // The right prefix, the parity byte off by one
        var parity: [UInt8] = [0x8B, 0x01] + bytes
        parity.append(parity.reduce(0, ^) ^ 1)
        #expect(throws: RecoveryKey.Problem.parity) { try RecoveryKey(decoding: Base58.encode(parity)) }
        #expect(throws: RecoveryKey.Problem.notBase58("é")) { try RecoveryKey(decoding: "Esé") }
    }

    @Test func aHugeTextIsRefusedWithoutWork() {
        // Thousands of digits: refused for its length (the conversion is quadratic, but bounded by
        // what a D-Bus message carries; the length check is the answer people see).
        #expect(throws: RecoveryKey.Problem.wrongLength) {
            try RecoveryKey(decoding: String(repeating: "z", count: 2000))
        }
    }
}

struct SecretStorageKeyTests {
    let keyBytes = [UInt8](repeating: 9, count: 32)

    /// A description as a client setting up secret storage writes it: the check is the MAC of
    /// 32 zero bytes encrypted under the name "".
    func description(for bytes: [UInt8], passphrase: JSONValue? = nil) throws -> JSONValue {
        let key = try SecretStorageKey(
            keyID: "k", key: SymmetricKey(data: bytes), description: ["algorithm": .string(SecretStorageKey.algorithm)])
        let check = try key.seal(secret: String(decoding: [UInt8](repeating: 0, count: 32), as: UTF8.self), name: "")
        var object: [String: JSONValue] = [
            "algorithm": .string(SecretStorageKey.algorithm),
            "iv": check["encrypted"]!["k"]!["iv"]!, "mac": check["encrypted"]!["k"]!["mac"]!,
        ]
        if let passphrase { object["passphrase"] = passphrase }
        return .object(object)
    }

    @Test func theRightKeyOpensTheSecretAndAWrongOneDoesNot() throws {
        let description = try description(for: keyBytes)
        let key = try SecretStorageKey(keyID: "k", key: SymmetricKey(data: keyBytes), description: description)
        let stored = try key.seal(secret: "c2VjcmV0", name: "m.cross_signing.self_signing")
        #expect(try key.open("m.cross_signing.self_signing", from: stored) == "c2VjcmV0")
        // Another name derives other keys: a secret cannot be passed off as another
        #expect(throws: SecretStorageKey.Problem.wrongKey) {
            try key.open("m.cross_signing.master", from: ["encrypted": ["k": stored["encrypted"]!["k"]!]])
        }
        var wrong = keyBytes
        wrong[0] ^= 1
        #expect(throws: SecretStorageKey.Problem.wrongKey) {
            try SecretStorageKey(keyID: "k", key: SymmetricKey(data: wrong), description: description)
        }
        // Without a check in the description, the secret's MAC still refuses the wrong key
        let unchecked = try SecretStorageKey(
            keyID: "k", key: SymmetricKey(data: wrong), description: ["algorithm": .string(SecretStorageKey.algorithm)])
        #expect(throws: SecretStorageKey.Problem.wrongKey) {
            try unchecked.open("m.cross_signing.self_signing", from: stored)
        }
    }

    @Test func aChangedCiphertextIsRefused() throws {
        let key = try SecretStorageKey(
            keyID: "k", key: SymmetricKey(data: keyBytes), description: try description(for: keyBytes))
        let stored = try key.seal(secret: "c2VjcmV0", name: "n")
        var bytes = UnpaddedBase64.decode(stored["encrypted"]!["k"]!["ciphertext"]!.stringValue!)!
        bytes[0] ^= 0x80
        var entry = stored["encrypted"]!["k"]!.objectValue!
        entry["ciphertext"] = .string(UnpaddedBase64.encode(bytes))
        #expect(throws: SecretStorageKey.Problem.wrongKey) {
            try key.open("n", from: ["encrypted": ["k": .object(entry)]])
        }
        #expect(throws: SecretStorageKey.Problem.notStoredUnderThisKey("n")) {
            try key.open("n", from: ["encrypted": ["other": .object(entry)]])
        }
        entry["iv"] = "AAAA"
        #expect(throws: SecretStorageKey.Problem.malformed("n")) {
            try key.open("n", from: ["encrypted": ["k": .object(entry)]])
        }
    }

    @Test func sealedIVsHaveBit63Clear() throws {
        let key = try SecretStorageKey(
            keyID: "k", key: SymmetricKey(data: keyBytes),
            description: ["algorithm": .string(SecretStorageKey.algorithm)])
        for _ in 0..<32 {
            let iv = UnpaddedBase64.decode(
                try key.seal(secret: "s", name: "n")["encrypted"]!["k"]!["iv"]!.stringValue!)!
            #expect(iv[8] & 0x80 == 0)
        }
    }

    @Test func anotherAlgorithmIsNotRead() {
        #expect(throws: SecretStorageKey.Problem.unsupported("m.secret_storage.v2")) {
            try SecretStorageKey(
                keyID: "k", key: SymmetricKey(data: keyBytes), description: ["algorithm": "m.secret_storage.v2"])
        }
    }

    /// PBKDF2-HMAC-SHA-512, RFC 6070-style inputs; the expected bytes from Python's hashlib
    /// (`hashlib.pbkdf2_hmac("sha512", b"password", b"salt", 1, 32)`).
    @Test func aPassphraseDerivesThePBKDF2Key() throws {
        let settings: JSONValue = ["algorithm": "m.pbkdf2", "salt": "salt", "iterations": 1]
        let derived = try SecretStorageKey.key(passphrase: "password", description: ["passphrase": settings])
        #expect(
            derived.withUnsafeBytes { Array($0) }.map { String(format: "%02x", $0) }.joined()
                == "867f70cf1ade02cff3752599a3a53dc4af34c7a669815ae5d513554e1c8cf252")
    }

    @Test func hostilePassphraseSettingsAreRefused() {
        for settings: JSONValue in [
            ["algorithm": "m.pbkdf2", "salt": "s", "iterations": 0],
            ["algorithm": "m.pbkdf2", "salt": "s", "iterations": -5],
            ["algorithm": "m.pbkdf2", "salt": "s", "iterations": .int(Int64(SecretStorageKey.maximumRounds + 1))],
            ["algorithm": "m.pbkdf2", "salt": "s", "iterations": 10, "bits": 512],
            ["algorithm": "m.pbkdf2", "iterations": 10],
            ["algorithm": "m.pbkdf2", "salt": "s"],
        ] {
            #expect(throws: SecretStorageKey.Problem.self) {
                try SecretStorageKey.key(passphrase: "p", description: ["passphrase": settings])
            }
        }
        #expect(throws: SecretStorageKey.Problem.noPassphrase) {
            try SecretStorageKey.key(passphrase: "p", description: ["algorithm": "x"])
        }
        #expect(throws: SecretStorageKey.Problem.unsupported("m.argon2")) {
            try SecretStorageKey.key(passphrase: "p", description: ["passphrase": ["algorithm": "m.argon2"]])
        }
    }
}

struct SelfSigningKeyTests {
    @Test func itsSignatureMakesTheDeviceVerifiedByItsOwner() throws {
        let chain = CrossSigningTests()
        let key = try SelfSigningKey(secret: UnpaddedBase64.encode(chain.selfSigning.rawRepresentation))
        let published = chain.sign(chain.keyObject(chain.selfSigning, usage: "self_signing"), with: chain.master)
        let master = chain.keyObject(chain.master, usage: "master")
        #expect(key.isPublished(published, masterKey: master, userID: chain.user))
        // Another self-signing key (an identity reset since), or one the master did not sign
        #expect(
            !key.isPublished(
                chain.sign(chain.keyObject(Curve25519.Signing.PrivateKey(), usage: "self_signing"), with: chain.master),
                masterKey: master, userID: chain.user))
        #expect(
            !key.isPublished(
                chain.keyObject(chain.selfSigning, usage: "self_signing"), masterKey: master, userID: chain.user))

        let deviceKeys = chain.device.deviceKeys(userID: chain.user, deviceID: "D")
        let signed = key.signed(deviceKeys.objectValue!, userID: chain.user)
        // Only the new signature goes up; the server merges it with the device's own
        #expect(signed["signatures"]?[chain.user]?.objectValue?.keys.sorted() == ["ed25519:\(key.publicKey)"])
        var merged = deviceKeys.objectValue!
        var mine = deviceKeys["signatures"]![chain.user]!.objectValue!
        mine["ed25519:\(key.publicKey)"] = signed["signatures"]![chain.user]!["ed25519:\(key.publicKey)"]!
        merged["signatures"] = [chain.user: .object(mine)]
        let identity = try DeviceIdentity(verifying: .object(merged), userID: chain.user, deviceID: "D")
        #expect(
            CrossSigning.isVerifiedByOwner(.object(merged), of: identity, masterKey: master, selfSigningKey: published))
        #expect(!CrossSigning.isVerifiedByOwner(deviceKeys, of: identity, masterKey: master, selfSigningKey: published))
    }

    @Test func aSecretThatIsNotASeedIsRefused() {
        #expect(throws: (any Error).self) { try SelfSigningKey(secret: "c2hvcnQ") }
        #expect(throws: (any Error).self) { try SelfSigningKey(secret: "not base64 !") }
    }
}

/// Known answers from implementations we did not write: matrix-rust-sdk's
/// `crates/matrix-sdk-crypto/src/secret_storage.rs` tests (`base58_parsing`,
/// `from_account_data_and_base58`, `from_account_data_and_passphrase`) and matrix-js-sdk's
/// `spec/unit/crypto-api/recovery-key.spec.ts`.
struct SecretStorageKnownAnswerTests {
    @Test func matrixRustSDKsRecoveryKeyDecodesToItsBytes() throws {
        let bytes: [UInt8] = [
            159, 189, 70, 187, 52, 81, 113, 198, 246, 2, 44, 154, 37, 213, 104, 27,
            165, 78, 236, 106, 108, 73, 83, 243, 173, 192, 185, 110, 157, 145, 173, 163,
        ]
        #expect(
            try RecoveryKey(decoding: "EsT           pRvZTnjck8    YrhRAtw XLS84Nr2r9S9LGAWDaExVAPBvLRK   ").bytes
                == bytes)
        #expect(
            RecoveryKey(key: SymmetricKey(data: bytes)).encoded
                == "EsTp RvZT njck 8Yrh RAtw XLS8 4Nr2 r9S9 LGAW DaEx VAPB vLRK")
        #expect(throws: RecoveryKey.Problem.parity) {
            try RecoveryKey(decoding: "EsTpRvZTnjck8YrhRAtwXLS84Nr2r9S9LGAWDaExVAPBvLRk")
        }
        #expect(throws: RecoveryKey.Problem.notARecoveryKey) {
            try RecoveryKey(decoding: "AATpRvZTnjck8YrhRAtwXLS84Nr2r9S9LGAWDaExVAPBvLRk")
        }
    }

    @Test func matrixJSSDKsCountingKeyBeginsEsSz() throws {
        let counting = (0..<32).map(UInt8.init)
        let shown = RecoveryKey(key: SymmetricKey(data: counting)).encoded
        #expect(shown.hasPrefix("EsSz "))
        #expect(throws: RecoveryKey.Problem.self) {
            try RecoveryKey(decoding: shown.replacingOccurrences(of: "EsSz", with: "EsSZ"))
        }
    }

    @Test func matrixRustSDKsKeyDescriptionsCheckTheirKeys() throws {
        let byKey: JSONValue = [
            "algorithm": .string(SecretStorageKey.algorithm), "iv": "xv5b6/p3ExEw++wTyfSHEg==",
            "mac": "ujBBbXahnTAMkmPUX2/0+VTfUh63pGyVRuBcDMgmJC8=",
        ]
        let key = try RecoveryKey(decoding: "EsTj 3yST y93F SLpB jJsz eAXc 2XzA ygD3 w69H fGaN TKBj jXEd").key
        _ = try SecretStorageKey(keyID: "k", key: key, description: byKey)
        #expect(throws: SecretStorageKey.Problem.wrongKey) {
            try SecretStorageKey(
                keyID: "k", key: SymmetricKey(data: [UInt8](repeating: 1, count: 32)), description: byKey)
        }

        let byPassphrase: JSONValue = [
            "algorithm": .string(SecretStorageKey.algorithm), "iv": "gH2iNpiETFhApvW6/FFEJQ",
            "mac": "9Lw12m5SKDipNghdQXKjgpfdj1/K7HFI2brO+UWAGoM",
            "passphrase": ["algorithm": "m.pbkdf2", "salt": "IuLnH7S85YtZmkkBJKwNUKxWF42g9O1H", "iterations": 10],
        ]
        let derived = try SecretStorageKey.key(passphrase: "It's a secret to everybody", description: byPassphrase)
        _ = try SecretStorageKey(keyID: "k", key: derived, description: byPassphrase)
        let other = try SecretStorageKey.key(passphrase: "It's a secret to nobody", description: byPassphrase)
        #expect(throws: SecretStorageKey.Problem.wrongKey) {
            try SecretStorageKey(keyID: "k", key: other, description: byPassphrase)
        }
    }
}

extension RecoveryKey {
    /// The key's bytes, for comparing in tests.
    var bytes: [UInt8] { key.withUnsafeBytes { Array($0) } }
}
