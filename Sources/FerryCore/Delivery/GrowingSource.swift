/// A file still being written, as someone reading it at the same time sees it: an upload that
/// starts while the file is still being copied into the spool.
public protocol GrowingSource: Sendable {
    /// Given the bytes read so far, waits until more are there and returns how many from the start
    /// may be read; given the whole size, returns it once the file is complete. Throws when the
    /// writer failed, or the file ended at another size than expected.
    func available(after offset: UInt64) async throws -> UInt64

    /// Copies bytes starting at `offset` from what the writer still holds in memory, at most
    /// `buffer.count`, and returns how many; 0 when it holds none there (then read the file).
    /// A reader close behind the writer so takes the bytes written without reading them back.
    func copyRecent(at offset: UInt64, into buffer: UnsafeMutableRawBufferPointer) -> Int
}

extension GrowingSource {
    public func copyRecent(at offset: UInt64, into buffer: UnsafeMutableRawBufferPointer) -> Int { 0 }
}
