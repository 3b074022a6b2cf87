/// The protobuf subset Olm and Megolm messages are written in: a version byte, then fields of
/// two wire types, varints (type 0) and length-delimited bytes (type 2).
///
/// Reading is for bytes from strangers: a varint longer than 64 bits, a length beyond the end,
/// or an unknown wire type is refused, unknown fields are skipped as the specification asks,
/// and nothing is allocated beyond the input's own size.
struct ProtoWriter {
    private(set) var bytes: [UInt8]

    init(version: UInt8) { bytes = [version] }

    mutating func varint(field: UInt8, _ value: UInt64) {
        bytes.append(field << 3)
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(rest & 0x7F) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    mutating func data(field: UInt8, _ value: [UInt8]) {
        bytes.append(field << 3 | 2)
        var length = UInt64(value.count)
        while length >= 0x80 {
            bytes.append(UInt8(length & 0x7F) | 0x80)
            length >>= 7
        }
        bytes.append(UInt8(length))
        bytes += value
    }
}

/// The fields of one message, by field number (the last occurrence wins, as in protobuf).
struct ProtoFields {
    let version: UInt8
    private(set) var varints: [UInt64: UInt64] = [:]
    private(set) var data: [UInt64: [UInt8]] = [:]

    init(_ bytes: ArraySlice<UInt8>) throws(CryptoError) {
        guard let first = bytes.first else { throw .malformed("an empty message") }
        version = first
        var at = bytes.startIndex + 1
        func readVarint() throws(CryptoError) -> UInt64 {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                guard at < bytes.endIndex else { throw .malformed("a number runs past the end") }
                let byte = bytes[at]
                at += 1
                guard shift < 64, shift < 63 || byte & 0x7E == 0 else {
                    throw .malformed("a number longer than 64 bits")
                }
                value |= UInt64(byte & 0x7F) << shift
                if byte & 0x80 == 0 { return value }
                shift += 7
            }
        }
        while at < bytes.endIndex {
            let key = try readVarint()
            switch key & 7 {
            case 0: varints[key >> 3] = try readVarint()
            case 2:
                let length = try readVarint()
                guard length <= UInt64(bytes.endIndex - at) else { throw .malformed("a field runs past the end") }
                data[key >> 3] = Array(bytes[at..<at + Int(length)])
                at += Int(length)
            default: throw .malformed("a field of wire type \(key & 7)")
            }
        }
    }
}
