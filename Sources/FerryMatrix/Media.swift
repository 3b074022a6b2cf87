import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// Uploads to the media repository, streamed from a file so memory does not grow with its size.
public struct Media: Sendable {
    let http: MatrixHTTP

    public init(http: MatrixHTTP) { self.http = http }

    /// The largest upload the server takes (`m.upload.size`), or nil when it sets none.
    public func uploadLimit() async throws(MatrixError) -> UInt64? {
        struct Answer: Decodable {
            var size: UInt64?
            enum CodingKeys: String, CodingKey { case size = "m.upload.size" }
        }
        do {
            return try await http.call(.GET, "/_matrix/client/v1/media/config", as: Answer.self).size
        } catch where error.status == 404 || error.status == 400 {
            // Servers older than Matrix 1.11 have only the unauthenticated media config.
            return try await http.call(.GET, "/_matrix/media/v3/config", as: Answer.self).size
        }
    }

    /// Uploads the file at `path`; `progress` is told the bytes sent so far. Returns the `mxc:` URI.
    public func upload(path: String, size: UInt64, contentType: String, filename: String,
                       progress: @escaping @Sendable (UInt64) -> Void) async throws(MatrixError) -> String {
        struct Answer: Decodable { var content_uri: String }
        let chunks = FileChunks(path: path, progress: progress)
        // The timeout grows with the file: at least 2 minutes, plus a minute per 100 MB.
        let timeout = TimeAmount.seconds(120 + Int64(size / 100_000_000) * 60)
        let data = try await http.sendFile(.POST, "/_matrix/media/v3/upload", query: [("filename", filename)],
                                           chunks: chunks, size: size, contentType: contentType, timeout: timeout)
        do {
            return try JSONDecoder().decode(Answer.self, from: data).content_uri
        } catch {
            throw MatrixError(kind: .malformed, message: "upload: \(error)")
        }
    }
}

/// A file read in chunks, each read when the one before it is on its way (MatrixHTTP.sendFile),
/// so at most a chunk or two is in memory at any time.
struct FileChunks: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let path: String
    let progress: @Sendable (UInt64) -> Void
    /// Each chunk crosses between threads twice on its way (reader task, event loop): at 64 KiB
    /// that overhead held a 256 MiB upload to a third of the socket's speed; 512 KiB keeps it small
    /// and two in flight are still only a megabyte.
    static let chunkSize = 512 << 10

    func makeAsyncIterator() -> Iterator { Iterator(path: path, progress: progress) }

    final class Iterator: AsyncIteratorProtocol {
        private var descriptor: Int32 = -1
        private let path: String
        private let progress: @Sendable (UInt64) -> Void
        private var sent: UInt64 = 0
        private let allocator = ByteBufferAllocator()

        init(path: String, progress: @escaping @Sendable (UInt64) -> Void) {
            self.path = path
            self.progress = progress
        }

        deinit { if descriptor >= 0 { close(descriptor) } }

        func next() async throws -> ByteBuffer? {
            if descriptor < 0 {
                descriptor = open(path, O_RDONLY | O_CLOEXEC)
                guard descriptor >= 0 else { throw MatrixError(kind: .malformed, message: "cannot read \(path)") }
            }
            var buffer = allocator.buffer(capacity: FileChunks.chunkSize)
            let count = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: FileChunks.chunkSize) { raw in
                read(descriptor, raw.baseAddress, raw.count)
            }
            guard count >= 0 else { throw MatrixError(kind: .malformed, message: "cannot read \(path)") }
            if count == 0 { return nil }
            sent += UInt64(count)
            progress(sent)
            return buffer
        }
    }
}
