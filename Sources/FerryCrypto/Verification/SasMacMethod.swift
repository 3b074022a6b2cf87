/// The two MAC methods of `m.sas.v1`. Both are the same HKDF + HMAC-SHA-256 (SasSecret.mac); they
/// differ only in how the 32-byte MAC is written as text.
public enum SasMacMethod: String, Sendable, CaseIterable {
    /// The method to use: the MAC in unpadded base64.
    case hkdfHmacSha256V2 = "hkdf-hmac-sha256.v2"
    /// The deprecated method, still all that older clients (libolm's, matrix-nio's) speak: libolm
    /// wrote the base64 over the MAC it was reading, so the text is not the MAC's base64 but what
    /// that in-place encoding produced. Spoken only with a side that offers nothing better.
    case hkdfHmacSha256 = "hkdf-hmac-sha256"

    /// Our preference, best first: what a start offers, and the order an accept picks from.
    static let preference: [SasMacMethod] = [.hkdfHmacSha256V2, .hkdfHmacSha256]

    /// The MAC of `input` under `secret` and `info`, as this method writes it.
    func mac(_ input: String, info: String, secret: SasSecret) -> String {
        let mac = secret.mac(input, info: info)
        switch self {
        case .hkdfHmacSha256V2: return UnpaddedBase64.encode(mac)
        case .hkdfHmacSha256: return Self.libolmInPlaceBase64(mac)
        }
    }

    /// Whether `text` is the MAC of `input`, in constant time. The v2 text is decoded and checked
    /// by swift-crypto; the old text cannot be decoded back (the in-place encoding loses most of
    /// the MAC), so the expected text is made and the two compared byte for byte.
    func isMac(_ text: String, of input: String, info: String, secret: SasSecret) -> Bool {
        switch self {
        case .hkdfHmacSha256V2:
            guard let tag = UnpaddedBase64.decode(text), tag.count == 32 else { return false }
            return secret.isMac(tag, of: input, info: info)
        case .hkdfHmacSha256:
            let expected = Array(mac(input, info: info, secret: secret).utf8), given = Array(text.utf8)
            guard expected.count == given.count else { return false }
            return zip(expected, given).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
        }
    }

    /// libolm's base64 run with its output over its input (olm_sas_calculate_mac), step for step:
    /// each group of three bytes is read, then its four characters written from where the
    /// output stands, which runs ahead of the input and overwrites bytes not yet read. Written
    /// as that loop over one buffer rather than as a derived formula, so that it is plainly the
    /// same procedure; the unit tests hold it to libolm's own output.
    static func libolmInPlaceBase64(_ input: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        let length = input.count
        var buffer = input + [UInt8](repeating: 0, count: length / 3 + 4)
        var read = 0, write = 0
        while read < length / 3 * 3 {
            var value = UInt32(buffer[read]) << 16 | UInt32(buffer[read + 1]) << 8 | UInt32(buffer[read + 2])
            read += 3
            for position in (0..<4).reversed() {
                buffer[write + position] = alphabet[Int(value & 0x3F)]
                value >>= 6
            }
            write += 4
        }
        switch length - read {
        case 2:
            let value = (UInt32(buffer[read]) << 8 | UInt32(buffer[read + 1])) << 2
            buffer[write + 2] = alphabet[Int(value & 0x3F)]
            buffer[write + 1] = alphabet[Int(value >> 6 & 0x3F)]
            buffer[write] = alphabet[Int(value >> 12)]
            write += 3
        case 1:
            let value = UInt32(buffer[read]) << 4
            buffer[write + 1] = alphabet[Int(value & 0x3F)]
            buffer[write] = alphabet[Int(value >> 6)]
            write += 2
        default: break
        }
        return String(decoding: buffer[0..<write], as: UTF8.self)
    }
}
