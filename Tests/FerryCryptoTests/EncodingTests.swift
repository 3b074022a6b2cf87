import FerryCore
@testable import FerryCrypto
import Foundation
import Testing

struct CanonicalJSONTests {
    private func canonical(_ json: String) throws -> String {
        CanonicalJSON.string(try JSONDecoder().decode(JSONValue.self, from: Data(json.utf8)))
    }

    /// The examples of the Matrix specification's appendix on canonical JSON.
    @Test func theSpecificationsExamples() throws {
        #expect(try canonical("{}") == "{}")
        #expect(try canonical(#"{"one": 1, "two": "Two"}"#) == #"{"one":1,"two":"Two"}"#)
        #expect(try canonical(#"{"b": "2", "a": "1"}"#) == #"{"a":"1","b":"2"}"#)
        #expect(
            try canonical(
                #"{"auth": {"success": true, "mxid": "@john.doe:example.com", "profile": {"#
                    + #""display_name": "John Doe", "three_pids": [{"medium": "email", "address": "#
                    + #""john.doe@example.org"}, {"medium": "msisdn", "address": "123456789"}]}}}"#
            )
                == #"{"auth":{"mxid":"@john.doe:example.com","profile":{"display_name":"John Doe","three_pids":"#
                + #"[{"address":"john.doe@example.org","medium":"email"},{"address":"123456789","medium":"msisdn"}]},"#
                + #""success":true}}"#
        )
        #expect(try canonical(#"{"a": "日本語"}"#) == #"{"a":"日本語"}"#)
        #expect(try canonical(#"{"本": 2, "日": 1}"#) == #"{"日":1,"本":2}"#)
        #expect(try canonical(#"{"a": "\u65E5"}"#) == #"{"a":"日"}"#)
        #expect(try canonical(#"{"a": null}"#) == #"{"a":null}"#)
        #expect(try canonical(#"{"a": -0, "b": 1e10}"#) == #"{"a":0,"b":10000000000}"#)
    }

    @Test func controlCharactersAndQuotesAreEscapedAndNothingElse() {
        #expect(CanonicalJSON.string(.string("\u{1}\u{8}\t\n\u{C}\r\"\\/é")) == #""\u0001\b\t\n\f\r\"\\/é""#)
    }

    @Test func keysSortByCodePointNotByLocale() {
        let value: JSONValue = ["b": 1, "B": 2, "é": 3, "e": 4, "😀": 5, "\u{FFFD}": 6]
        #expect(CanonicalJSON.string(value) == #"{"B":2,"b":1,"e":4,"é":3,"�":6,"😀":5}"#)
    }

    @Test func fractionsAreNotSignedJSON() {
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(JSONValue.self, from: Data(#"{"a": 1.5}"#.utf8))
        }
    }
}

struct UnpaddedBase64Tests {
    @Test func roundTripsWithoutPadding() {
        for length in 0..<8 {
            let bytes = (0..<length).map { UInt8($0 * 37 & 0xFF) }
            let text = UnpaddedBase64.encode(bytes)
            #expect(!text.contains("="))
            #expect(UnpaddedBase64.decode(text) == bytes)
        }
        #expect(UnpaddedBase64.decode("AQ==") == [1])
        #expect(UnpaddedBase64.decode("A") == nil)
        #expect(UnpaddedBase64.decode("**") == nil)
    }
}

struct ProtoFieldsTests {
    private func read(_ bytes: [UInt8]) throws(CryptoError) -> ProtoFields { try ProtoFields(bytes[...]) }

    @Test func readsWhatItWrites() throws {
        var writer = ProtoWriter(version: 3)
        writer.varint(field: 1, 300)
        writer.data(field: 2, [9, 8, 7])
        writer.varint(field: 3, UInt64.max)
        let fields = try read(writer.bytes)
        #expect(fields.version == 3)
        #expect(fields.varints[1] == 300 && fields.varints[3] == UInt64.max)
        #expect(fields.data[2] == [9, 8, 7])
        // 300 is two varint bytes, as protobuf writes it.
        #expect(Array(writer.bytes[1...3]) == [0x08, 0xAC, 0x02])
    }

    @Test func unknownFieldsAreSkipped() throws {
        let fields = try read([3, 0x38, 5, 0x42, 1, 0xFF, 0x08, 7])
        #expect(fields.varints[1] == 7)
    }

    @Test func hostileBytesAreRefusedNotTrusted() {
        let bad: [[UInt8]] = [
            [], // nothing at all
            [3, 0x08], // a varint with no bytes
            [3, 0x08, 0x80], // a varint that never ends
            [3, 0x08] + [UInt8](repeating: 0xFF, count: 9) + [0x02], // more than 64 bits
            [3, 0x12, 5, 1, 2], // a length beyond the end
            [3, 0x12, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F], // a length of 4 GiB in 7 bytes
            [3, 0x0D, 1, 2, 3, 4], // wire type 5
        ]
        for bytes in bad {
            #expect(throws: CryptoError.self, "\(bytes)") { try read(bytes) }
        }
    }
}

struct AttachmentEncryptorTests {
    @Test func counterCarriesAcrossBytes() {
        let iv = [UInt8](repeating: 0, count: 7) + [0xAA] + [0, 0, 0, 0, 0, 0, 0xFF, 0xFF]
        #expect(
            AttachmentEncryptor.counterBlock(iv, plus: 1) == [UInt8](repeating: 0, count: 7) + [0xAA] + [
                0, 0, 0, 0, 0, 1, 0, 0,
            ])
        #expect(AttachmentEncryptor.counterBlock(iv, plus: 0) == iv)
    }

    @Test func chunkedEqualsWhole() throws {
        let key = [UInt8](repeating: 7, count: 32),
            iv = [UInt8](repeating: 1, count: 8) + [UInt8](repeating: 0, count: 8)
        let plain = (0..<1000).map { UInt8($0 & 0xFF) }
        var whole = try AttachmentEncryptor(key: key, iv: iv)
        let once = try whole.encrypt(plain)
        var chunked = try AttachmentEncryptor(key: key, iv: iv)
        var pieces: [UInt8] = []
        for start in stride(from: 0, to: plain.count, by: 48) {
            pieces += try chunked.encrypt(Array(plain[start..<min(plain.count, start + 48)]))
        }
        #expect(pieces == once)
        #expect(chunked.ciphertextSHA256 == whole.ciphertextSHA256)
        #expect(once != plain)
    }

    @Test func aChunkAfterAnUnevenOneIsRefused() throws {
        var encryptor = AttachmentEncryptor()
        _ = try encryptor.encrypt([1, 2, 3])
        #expect(throws: CryptoError.self) { try encryptor.encrypt([4]) }
    }

    @Test func everyFileGetsItsOwnKeyAndIV() {
        let first = AttachmentEncryptor().file(url: "mxc://a/b"), second = AttachmentEncryptor().file(url: "mxc://a/b")
        #expect(first["key"]?["k"] != second["key"]?["k"])
        #expect(first["iv"] != second["iv"])
    }
}
