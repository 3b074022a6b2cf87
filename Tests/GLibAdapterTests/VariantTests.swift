import CGLib
import Testing
@testable import GLibAdapter

/// Ferry's values through GLib's own GVariant and back: what goes on the bus is what a client reads.
struct VariantTests {
    static let values: [Variant] = [
        .string("hé\u{1F6A2}"), .strings(["a", ""]), .bool(true), .int64(-7), .uint64(.max), .uint32(3),
        .dictionary(["k": .string("v"), "n": .uint32(1)]), .dictionaries([["a": .bool(false)], [:]]),
    ]

    @Test(arguments: values) func aValueComesBackFromGLibAsItWent(_ value: Variant) {
        let gvariant = value.makeGVariant()
        defer { g_variant_unref(gvariant) }
        #expect(Variant(gvariant: gvariant) == value)
    }

    @Test func aSerializedDictionaryReadsBackAndGarbageReadsAsEmptyValues() throws {
        let dict: [String: Variant] = ["uris": .strings(["file:///a"]), "text": .string("hi")]
        let gvariant = Variant.dictionary(dict).makeGVariant()
        g_variant_ref_sink(gvariant)
        defer { g_variant_unref(gvariant) }
        let bytes = try #require(g_variant_get_data(gvariant)).withMemoryRebound(to: UInt8.self, capacity: 1) {
            Array(UnsafeBufferPointer(start: $0, count: Int(g_variant_get_size(gvariant))))
        }
        #expect(Variant.dictionary(serialized: bytes) == dict)
        // GLib checks the bytes as it reads: what does not fit the type is empty, never a crash.
        #expect(Variant.dictionary(serialized: []) == [:])
        let garbage = Variant.dictionary(serialized: [0xff, 0x00, 0x13, 0x37, 0x01])
        #expect(garbage.keys.allSatisfy(\.isEmpty) && garbage.values.allSatisfy { $0.stringValue == nil })
    }

    @Test func fileURIsAndPathsGoBothWays() throws {
        let uri = try #require(FileURI.uri(forPath: "/tmp/a b#c.png"))
        #expect(uri == "file:///tmp/a%20b%23c.png")
        #expect(FileURI.path(of: uri)?.path == "/tmp/a b#c.png")
        #expect(FileURI.scheme(of: "https://example.org/x") == "https")
        #expect(FileURI.path(of: "https://example.org/x") == nil)
    }

    @Test func aContentTypeIsGuessedFromTheBytesBeforeTheName() {
        let png: [UInt8] = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]
        #expect(ContentType.guess(name: "photo.txt", leadingBytes: png) == "image/png")
        #expect(ContentType.guess(name: "notes.txt", leadingBytes: Array("plain words\n".utf8)) == "text/plain")
        // A WebM recorded as a stream reads as Matroska by content alone: its name says which kind.
        let matroska: [UInt8] =
            [0x1A, 0x45, 0xDF, 0xA3, 0x01, 0, 0, 0, 0, 0, 0, 0x10, 0x42, 0x82, 0x85] + Array("webm".utf8) + [0]
            + [0x42, 0x87, 0x81, 0x02, 0x42, 0x85, 0x81, 0x02, 0x18, 0x53, 0x80, 0x67, 0x01, 0xFF]
        #expect(ContentType.guess(name: "recording.webm", leadingBytes: matroska) == "video/webm")
        // Other names do not turn it into what it is not.
        #expect(
            ContentType.guess(name: "notes.txt", leadingBytes: matroska)
                == ContentType.guess(name: nil, leadingBytes: matroska))
        #expect(ContentType.isA("image/png", "image/*") || ContentType.isA("image/png", "image"))
    }
}
