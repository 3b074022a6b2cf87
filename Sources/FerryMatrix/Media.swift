import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import FerryCore

/// Uploads to the media repository, streamed from a file so memory does not grow with its size.
public struct Media: Sendable {
    let http: MatrixHTTP

    public init(http: MatrixHTTP) { self.http = http }

    /// The largest upload the server takes (`m.upload.size`), or nil when it sets none.
    public func uploadLimit() async throws(MatrixError) -> UInt64? {
        // Read leniently: a negative, fractional or non-numeric size means no known limit
        // (the server still refuses what it will not take), not a failed share.
        struct Answer: Decodable {
            var size: LenientNumber?
            enum CodingKeys: String, CodingKey { case size = "m.upload.size" }
            var bytes: UInt64? { size?.value.flatMap(ServerNumbers.byteCount) }
        }
        do {
            return try await http.call(.GET, "/_matrix/client/v1/media/config", as: Answer.self).bytes
        } catch let error where error.status == 404 || error.status == 400 {
            // Servers older than Matrix 1.11 have only the unauthenticated media config.
            return try await http.call(.GET, "/_matrix/media/v3/config", as: Answer.self).bytes
        }
    }

    /// Uploads the file at `path`; `progress` is told the bytes sent so far. Returns the `mxc:` URI.
    /// `available`, for a file still being written, is asked before each chunk how many bytes
    /// from the start may be read (see FileChunks.Available).
    /// `transform` (an encryption) is applied to each chunk on its way, keeping its length;
    /// `filename` nil sends no name (an encrypted file's name is inside its event only).
    public func upload(
        path: String, size: UInt64, contentType: String, filename: String?,
        available: FileChunks.Available? = nil, transform: FileChunks.Transform? = nil,
        progress: @escaping @Sendable (UInt64) -> Void
    ) async throws(MatrixError) -> String {
        struct Answer: Decodable { var content_uri: String }
        var chunks = FileChunks(path: path, size: size, available: available, progress: progress)
        chunks.transform = transform
        // No deadline for the whole upload: it may take as long as it keeps moving (sendFile).
        let data = try await http.sendFile(
            .POST, "/_matrix/media/v3/upload", query: filename.map { [("filename", $0)] } ?? [],
            chunks: chunks, size: size, contentType: contentType,
            stall: MatrixHTTP.uploadStall)
        do {
            return try JSONDecoder().decode(Answer.self, from: data).content_uri
        } catch {
            throw MatrixError(kind: .malformed, message: "upload: \(error)")
        }
    }
}

/// A file read in chunks, each read when the one before it is on its way (MatrixHTTP.sendFile),
/// so at most a chunk or two is in memory at any time.
public struct FileChunks: AsyncSequence, Sendable {
    public typealias Element = ByteBuffer
    /// A file still being written: never read past what it has, abandoned when it throws, and
    /// taken from the writer's memory while it still holds the bytes.
    public typealias Available = any GrowingSource
    /// Turns each chunk, as read and where it lies, into what is sent in its place (the
    /// encryption of an attachment for an encrypted room). Chunks come in order, each but the
    /// last a whole number of 16-byte blocks.
    public typealias Transform = @Sendable (UnsafeMutableRawBufferPointer) throws -> Void
    var transform: Transform?
    let path: String
    let size: UInt64
    let available: Available?
    let progress: @Sendable (UInt64) -> Void
    /// Each chunk crosses between threads twice on its way (reader task, event loop): small chunks
    /// held an upload well below the socket's speed (docs/PERFORMANCE.md); these keep that small,
    /// and two in flight are still only a megabyte.
    static let chunkSize = 512 << 10

    public func makeAsyncIterator() -> Iterator { Iterator(chunks: self) }

    public final class Iterator: AsyncIteratorProtocol {
        private var descriptor: Int32 = -1
        private let chunks: FileChunks
        private var sent: UInt64 = 0
        private let allocator = ByteBufferAllocator()
        /// Chunk buffers taken in turn. By the time a buffer's turn comes again the connection has
        /// written it and let go of it (MatrixHTTP.sendFile waits for all but the last
        /// `chunksInFlight` writes), so it is filled in place: a new buffer per chunk meant a new
        /// mapping per chunk and a page fault per 4 KiB sent (the allocator maps every block over
        /// 128 KiB on its own, MemoryPolicy). Should one still be shared, writing into it copies it.
        private var ring: [ByteBuffer] = []
        private var turn = 0
        static let ringSize = MatrixHTTP.chunksInFlight + 1

        /// The aligned buffer direct reads land in, when the file is read past the page cache.
        private var scratch: UnsafeMutableRawPointer?

        init(chunks: FileChunks) { self.chunks = chunks }

        deinit {
            if descriptor >= 0 { close(descriptor) }
            scratch?.deallocate()
        }

        /// One chunk read with O_DIRECT at the position `sent`: whole blocks into the aligned
        /// scratch buffer (at the end of the file the kernel returns what there is), then the
        /// `wanted` bytes into `buffer`. A file system that refuses turns direct reads off.
        private func readDirect(
            into buffer: inout ByteBuffer, wanted: Int, scratch: UnsafeMutableRawPointer
        ) throws -> Int {
            let alignment = DirectIO.alignment
            let length = (wanted + alignment - 1) / alignment * alignment
            let count = pread(descriptor, scratch, length, off_t(sent))
            if count < 0 && errno == EINVAL {
                self.scratch = nil
                scratch.deallocate()
                _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~DirectIO.flag)
                return try readBuffered(into: &buffer, wanted: wanted)
            }
            guard count >= 0 else { return count }
            let taken = Swift.min(count, wanted)
            buffer.writeBytes(UnsafeRawBufferPointer(start: scratch, count: taken))
            return taken
        }

        /// One chunk read through the page cache at the position `sent`.
        private func readBuffered(into buffer: inout ByteBuffer, wanted: Int) throws -> Int {
            let descriptor = descriptor
            let offset = off_t(sent)
            return buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: wanted) { raw in
                pread(descriptor, raw.baseAddress, wanted, offset)
            }
        }

        public func next() async throws -> ByteBuffer? {
            var wanted = FileChunks.chunkSize
            if let available = chunks.available {
                // Asked before every chunk, not only when caught up: a copy given up stops the
                // upload within a chunk.
                var readable = try await available.available(after: sent)
                if sent >= readable { return nil }
                // A transform takes whole 16-byte blocks but for the last chunk: until the file
                // is complete, wait for a block and read whole ones.
                if chunks.transform != nil {
                    while readable < chunks.size, readable - sent < 16 {
                        readable = try await available.available(after: readable)
                    }
                }
                wanted = Int(Swift.min(UInt64(wanted), readable - sent))
                if chunks.transform != nil, readable < chunks.size { wanted = wanted / 16 * 16 }
            }
            if ring.count < Self.ringSize { ring.append(allocator.buffer(capacity: FileChunks.chunkSize)) }
            let slot = turn
            turn = (turn + 1) % Self.ringSize
            ring[slot].clear()
            var count = 0
            if let available = chunks.available {
                let offset = sent
                count = ring[slot].writeWithUnsafeMutableBytes(minimumWritableBytes: wanted) { raw in
                    available.copyRecent(at: offset, into: UnsafeMutableRawBufferPointer(rebasing: raw[..<wanted]))
                }
                // The writer may hold fewer bytes than were asked for: a transform still gets
                // whole blocks before the file's end (the rest comes with the next chunk).
                if chunks.transform != nil, sent + UInt64(count) < chunks.size, count % 16 != 0 {
                    count -= count % 16
                    ring[slot].moveWriterIndex(to: ring[slot].readerIndex + count)
                }
            }
            if count == 0 { count = try readFile(into: &ring[slot], wanted: wanted) }
            if count == 0 {
                if chunks.available != nil {
                    // TRANSLATORS: a reason a file could not be sent, after "unexpected answer: "; {path} is where
                    // Ferry keeps its copy of the file.
                    throw MatrixError(kind: .malformed, message: tr("{path} ended early", ["path": chunks.path]))
                }
                return nil
            }
            if let transform = chunks.transform {
                try ring[slot].withUnsafeMutableReadableBytes { try transform($0) }
            }
            sent += UInt64(count)
            chunks.progress(sent)
            return ring[slot]
        }

        /// Reads the next chunk from the file itself, opening it the first time.
        private func readFile(into buffer: inout ByteBuffer, wanted: Int) throws -> Int {
            let path = chunks.path
            if descriptor < 0 {
                // A large file is read past the page cache, as it was staged (DirectCopy).
                if chunks.size >= DirectIO.minimumSize, DirectIO.flag != 0 {
                    descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | DirectIO.flag)
                    if descriptor >= 0 {
                        scratch = UnsafeMutableRawPointer.allocate(
                            byteCount: FileChunks.chunkSize, alignment: DirectIO.alignment)
                    }
                }
                // Never through a link: a file planted in the spool in place of a copy is not read.
                if descriptor < 0 { descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW) }
                guard descriptor >= 0 else {
                    // TRANSLATORS: a reason a file could not be sent, after "unexpected answer: "; {path} is where
                    // Ferry keeps its copy of the file.
                    throw MatrixError(kind: .malformed, message: tr("cannot read {path}", ["path": path]))
                }
            }
            let count =
                try scratch.map { try readDirect(into: &buffer, wanted: wanted, scratch: $0) }
                ?? readBuffered(into: &buffer, wanted: wanted)
            guard count >= 0 else {
                // TRANSLATORS: a reason a file could not be sent, after "unexpected answer: "; {path} is where Ferry
                // keeps its copy of the file.
                throw MatrixError(kind: .malformed, message: tr("cannot read {path}", ["path": path]))
            }
            return count
        }
    }
}
