import CGLib
import Foundation

/// A file behind a non-local URI (sftp:, smb:, … through GVfs), read with a deadline.
///
/// A GVfs mount whose server stops answering blocks the reader forever, and cancelling does not
/// help: the client stream sends the daemon a cancel and waits for its answer, which a hung
/// backend never gives (measured with a stopped sshd). So the reading happens on a thread of its
/// own, and the caller waits for it, for as long as bytes keep coming: after `stallLimit` seconds
/// without any, the caller gets `RemoteFileStalled` and the thread is left to GIO. It never calls
/// back again: `inspect` and `sink` run only under the transfer's lock while it is not abandoned,
/// so nothing of the caller's is touched once it has returned.
public enum RemoteFile {
    public struct Info: Sendable {
        public let displayName: String
        public let size: UInt64
        public let isRegular: Bool
    }

    /// Reads the file at `uri`: `inspect` sees its info first (and may refuse it by throwing),
    /// then `sink` gets its bytes in chunks. More than `limit` bytes is `RemoteFileTooLarge`.
    public static func read(
        uri: String, stallLimit seconds: Int, limit: UInt64,
        inspect: @escaping (Info) throws -> Void,
        sink: @escaping (UnsafeRawBufferPointer) throws -> Void
    ) throws -> Info {
        let transfer = Transfer(inspect: inspect, sink: sink)
        let thread = Thread { transfer.run(uri: uri, limit: limit) }
        thread.name = "ferry-remote-read"
        thread.start()
        return try transfer.wait(stallLimit: max(1, seconds))
    }

    /// One read, shared by the reading thread and the waiting caller; every field under `condition`.
    private final class Transfer: @unchecked Sendable {
        let condition = NSCondition()
        /// Cancels what GIO can cancel; the caller's own ref is dropped once it stops waiting.
        let cancellable = g_cancellable_new()!
        var lastProgress = DispatchTime.now()
        var abandoned = false
        var outcome: Result<Info, Error>?
        /// The caller's callbacks: called only by `step`, under the lock, while the caller waits.
        private let inspect: (Info) throws -> Void
        private let sink: (UnsafeRawBufferPointer) throws -> Void

        init(inspect: @escaping (Info) throws -> Void, sink: @escaping (UnsafeRawBufferPointer) throws -> Void) {
            self.inspect = inspect
            self.sink = sink
        }

        deinit { g_object_unref(UnsafeMutableRawPointer(cancellable)) }

        func wait(stallLimit seconds: Int) throws -> Info {
            condition.lock()
            defer { condition.unlock() }
            while outcome == nil {
                let quiet = DispatchTime.now().uptimeNanoseconds - lastProgress.uptimeNanoseconds
                if quiet > UInt64(seconds) * 1_000_000_000 {
                    abandoned = true
                    g_cancellable_cancel(cancellable)
                    throw RemoteFileStalled(seconds: seconds)
                }
                _ = condition.wait(until: Date(timeIntervalSinceNow: 1))
            }
            return try outcome!.get()
        }

        /// Runs `body` under the lock, as progress, unless the caller is gone; false when it is.
        private func step(_ body: () throws -> Void) -> Bool {
            condition.lock()
            defer { condition.unlock() }
            guard !abandoned, outcome == nil else { return false }
            lastProgress = .now()
            do { try body() } catch { finish(.failure(error)) }
            return outcome == nil
        }

        /// Call with the lock held.
        private func finish(_ result: Result<Info, Error>) {
            if outcome == nil { outcome = result }
            condition.broadcast()
        }

        private func end(_ result: Result<Info, Error>) {
            condition.lock()
            finish(result)
            condition.unlock()
        }

        func run(uri: String, limit: UInt64) {
            let file = g_file_new_for_uri(uri)
            defer { g_object_unref(UnsafeMutableRawPointer(file)) }
            var error: UnsafeMutablePointer<GError>?
            guard
                let fileInfo = g_file_query_info(
                    file, "standard::display-name,standard::size,standard::type",
                    G_FILE_QUERY_INFO_NONE, cancellable, &error)
            else {
                return end(.failure(GLibError(consuming: error!)))
            }
            let info = Info(
                displayName: String(cString: g_file_info_get_display_name(fileInfo)),
                size: UInt64(max(0, g_file_info_get_size(fileInfo))),
                isRegular: g_file_info_get_file_type(fileInfo) == G_FILE_TYPE_REGULAR)
            g_object_unref(UnsafeMutableRawPointer(fileInfo))
            guard step({ try inspect(info) }) else { return }
            guard let stream = g_file_read(file, cancellable, &error) else {
                return end(.failure(GLibError(consuming: error!)))
            }
            let input = UnsafeMutableRawPointer(stream).assumingMemoryBound(to: GInputStream.self)
            defer {
                g_input_stream_close(input, cancellable, nil)
                g_object_unref(UnsafeMutableRawPointer(stream))
            }
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 8)
            defer { buffer.deallocate() }
            var total: UInt64 = 0
            while true {
                let count = g_input_stream_read(input, buffer.baseAddress, gsize(buffer.count), cancellable, &error)
                if count < 0 { return end(.failure(GLibError(consuming: error!))) }
                if count == 0 { return end(.success(info)) }
                total += UInt64(count)
                guard
                    step({
                        if total > limit { throw RemoteFileTooLarge() }
                        try sink(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
                    })
                else { return }
            }
        }
    }
}

/// Raised by `RemoteFile.read` when the file grows past the limit while it is read.
public struct RemoteFileTooLarge: Error {}

/// Raised by `RemoteFile.read` when the location sent nothing for `seconds`.
public struct RemoteFileStalled: Error {
    public let seconds: Int
}
