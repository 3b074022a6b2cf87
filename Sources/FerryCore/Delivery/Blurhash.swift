#if canImport(Glibc)
import Glibc
#endif

/// A picture's blurred placeholder as the short string Element and the mobile clients send in
/// `info["xyz.amorgan.blurhash"]`: a few cosine components of the picture, base 83. A client shows
/// it while the thumbnail loads. The algorithm is Wolt's (github.com/woltapp/blurhash), written
/// from its description; the tests compare it with the Python implementation on PyPI.
public enum Blurhash {
    /// The hash of `width` × `height` pixels, `channels` bytes each (RGB or RGBA, alpha ignored),
    /// rows `stride` bytes apart, with `xComponents` × `yComponents` (1...9 each) components.
    /// Nil for an empty picture or components out of range.
    public static func encode(
        pixels: UnsafeRawBufferPointer, width: Int, height: Int, stride: Int, channels: Int,
        xComponents: Int = 4, yComponents: Int = 3
    ) -> String? {
        guard width > 0, height > 0, channels >= 3, stride >= width * channels,
            pixels.count >= stride * (height - 1) + width * channels,
            (1...9).contains(xComponents), (1...9).contains(yComponents)
        else { return nil }
        // Linear light for every pixel once, instead of once per component.
        var linear = [Double](repeating: 0, count: width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                let source = y * stride + x * channels
                let target = (y * width + x) * 3
                for c in 0..<3 { linear[target + c] = sRGBToLinear(pixels[source + c]) }
            }
        }
        var factors: [(Double, Double, Double)] = []
        for j in 0..<yComponents {
            for i in 0..<xComponents {
                let normalisation: Double = i == 0 && j == 0 ? 1 : 2
                var (r, g, b) = (0.0, 0.0, 0.0)
                for y in 0..<height {
                    let cosY = cos(Double.pi * Double(j) * Double(y) / Double(height))
                    for x in 0..<width {
                        let basis = normalisation * cos(Double.pi * Double(i) * Double(x) / Double(width)) * cosY
                        let at = (y * width + x) * 3
                        r += basis * linear[at]
                        g += basis * linear[at + 1]
                        b += basis * linear[at + 2]
                    }
                }
                let scale = 1 / Double(width * height)
                factors.append((r * scale, g * scale, b * scale))
            }
        }
        let dc = factors[0]
        let ac = factors.dropFirst()
        var hash = base83((xComponents - 1) + (yComponents - 1) * 9, length: 1)
        let maximum: Double
        if ac.isEmpty {
            maximum = 1
            hash += base83(0, length: 1)
        } else {
            let actual = ac.map { max(abs($0.0), abs($0.1), abs($0.2)) }.max() ?? 0
            let quantised = Int(max(0, min(82, (actual * 166 - 0.5).rounded(.down))))
            maximum = Double(quantised + 1) / 166
            hash += base83(quantised, length: 1)
        }
        hash += base83(linearToSRGB(dc.0) << 16 | linearToSRGB(dc.1) << 8 | linearToSRGB(dc.2), length: 4)
        for factor in ac {
            func quantise(_ value: Double) -> Int {
                Int(max(0, min(18, (signedPow(value / maximum, 0.5) * 9 + 9.5).rounded(.down))))
            }
            hash += base83(quantise(factor.0) * 19 * 19 + quantise(factor.1) * 19 + quantise(factor.2), length: 2)
        }
        return hash
    }

    static let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#$%*+,-.:;=?@[]^_{|}~")

    static func base83(_ value: Int, length: Int) -> String {
        var digits = ""
        var divisor = 1
        for _ in 1..<max(1, length) { divisor *= 83 }
        for _ in 0..<length {
            digits.append(alphabet[(value / divisor) % 83])
            divisor /= 83
        }
        return digits
    }

    static func sRGBToLinear(_ value: UInt8) -> Double {
        let v = Double(value) / 255
        return v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4)
    }

    static func linearToSRGB(_ value: Double) -> Int {
        let v = max(0, min(1, value))
        return v <= 0.003_130_8 ? Int(v * 12.92 * 255 + 0.5) : Int((1.055 * pow(v, 1 / 2.4) - 0.055) * 255 + 0.5)
    }

    static func signedPow(_ value: Double, _ exponent: Double) -> Double {
        (value < 0 ? -1 : 1) * pow(abs(value), exponent)
    }
}
