#if canImport(Glibc)
import Glibc
#endif

/// Overwrites key material held in an array with zeros before the array goes: the allocator
/// would otherwise hand the bytes, intact, to whatever asks for memory next (and a core dump or
/// a debugger would show them). `explicit_bzero` is a write the compiler may not drop as dead.
/// Keys held for longer are `SymmetricKey`s, which swift-crypto zeroes when they are released.
func wipe(_ bytes: inout [UInt8]) {
    bytes.withUnsafeMutableBytes { buffer in
        guard let base = buffer.baseAddress else { return }
        explicit_bzero(base, buffer.count)
    }
}
