import FerryCore
import GLibAdapter
#if canImport(Glibc)
import Glibc
#endif

/// Turns a plan's items into a share's items, copying every file into the spool first.
///
/// All files are checked before any is copied, so a share with one bad item is refused whole
/// and quickly; if a copy fails half-way, the share's spool directory is removed again.
public struct Stager: Sendable {
    public let spool: Spool
    public let limits: Limits

    public init(spool: Spool, limits: Limits) {
        self.spool = spool
        self.limits = limits
    }

    /// `ahead`, when given, is told of each local file as its copy begins and may start uploading
    /// it while it is copied; it is told to abandon the share when staging fails.
    public func stage(
        _ plan: SharePlan, shareID: String, ahead: (any UploadAhead)? = nil
    ) throws(StagingError) -> [ShareItem] {
        let sources = try plan.items.map { item throws(StagingError) in try FileSource.resolve(item, limits: limits) }
        guard sources.contains(where: \.isFile) else { return sources.map { $0.textItem! } }
        try DiskSpace.check(
            needed: sources.reduce(UInt64(0)) { $0 &+ $1.knownSize }, in: spool.root, reserve: limits.diskReserve)

        let directory = spool.directory(for: shareID)
        guard mkdir(directory, 0o700) == 0 else {
            throw .stagingFailed(directory, reason: String(cString: strerror(errno)))
        }
        do {
            var items: [ShareItem] = []
            var staged: [String] = []
            for (position, source) in sources.enumerated() {
                let path = spool.path(for: shareID, position: position)
                if source.isFile { staged.append(path) }
                items.append(
                    try source.stage(to: path, limits: limits) { item in
                        ahead?.begin(
                            shareID: shareID, position: position, path: path, item: item,
                            destinations: plan.destinations)
                    })
            }
            // The copies are on disk before the share is acknowledged.
            try DiskFlush.flush(files: staged, directories: [directory, spool.root])
            return items
        } catch {
            ahead?.abandon(shareID: shareID)
            spool.remove(shareID: shareID)
            throw error
        }
    }
}

/// Someone who may start uploading a file while it is still being copied into the spool: the
/// sender, when a person is signed in and the share's destinations are known.
public protocol UploadAhead: Sendable {
    /// `item` is about to be copied to `path`; returns the GrowingFile the copy must keep informed,
    /// or nil when no upload starts.
    func begin(shareID: String, position: Int, path: String, item: ShareItem, destinations: [String]) -> GrowingFile?
    /// The share was not accepted, or needs no early uploads any more: stop them and forget them.
    func abandon(shareID: String)
}

/// Where one item's bytes come from, checked but not yet copied.
enum FileSource {
    case local(LocalFile, uri: String)
    case remote(uri: String)
    case inline(ShareItem)

    var isFile: Bool { if case .inline = self { return false }; return true }
    /// The bytes its copy will take, where known before copying (a non-local file's size is not).
    var knownSize: UInt64 { if case .local(let file, _) = self { return file.size }; return 0 }
    var textItem: ShareItem? { if case .inline(let item) = self { return item }; return nil }

    static func resolve(_ item: SharePlan.Item, limits: Limits) throws(StagingError) -> FileSource {
        switch item {
        case .text(let text): return .inline(.text(text))
        case .link(let url): return .inline(.link(url))
        case .file(let uri):
            guard let scheme = SharePlan.uriScheme(uri) else {
                // TRANSLATORS: the reason in "{uri} is not a URI Ferry understands: {reason}."
                throw .invalidURI(uri, reason: tr("it has no scheme such as file://"))
            }
            if scheme == "file" {
                guard let (path, host) = FileURI.path(of: uri) else {
                    // TRANSLATORS: the reason in "{uri} is not a URI Ferry understands: {reason}."
                    throw .invalidURI(uri, reason: tr("it is not a valid file: URI"))
                }
                if let host, !host.isEmpty, host != "localhost" { throw .remoteHost(uri, host: host) }
                return .local(try LocalFile.check(path, limits: limits), uri: uri)
            }
            guard FileURI.readableSchemes.contains(scheme) else { throw .unsupportedScheme(uri, scheme: scheme) }
            return .remote(uri: uri)
        }
    }

    /// Copies the item's bytes to `destination`; `starting` hears of a local file's item (its type
    /// sniffed, its size as checked) before the copy begins.
    func stage(
        to destination: String, limits: Limits,
        starting: (ShareItem) -> GrowingFile? = { _ in nil }
    ) throws(StagingError) -> ShareItem {
        switch self {
        case .inline(let item): return item
        case .local(let file, let uri):
            let name = Self.baseName(file.path)
            var item = ShareItem(
                kind: .file, name: name, contentType: "application/octet-stream", size: file.size, uri: uri)
            let copied = try file.copy(to: destination, limits: limits) { leading in
                item.contentType = ContentType.guess(name: name, leadingBytes: leading)
                return starting(item)
            }
            // What was copied is what will be sent, should the file have changed since it was checked.
            item.size = copied.size
            return item
        case .remote(let uri):
            return try RemoteStaging.copy(uri: uri, to: destination, limits: limits)
        }
    }

    static func baseName(_ path: String) -> String {
        path.split(separator: "/", omittingEmptySubsequences: true).last.map(String.init) ?? path
    }
}
