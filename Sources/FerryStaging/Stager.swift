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

    public func stage(_ plan: SharePlan, shareID: String) throws(ShareError) -> [ShareItem] {
        let sources = try plan.items.map { item throws(ShareError) in try FileSource.resolve(item, limits: limits) }
        guard sources.contains(where: \.isFile) else { return sources.map { $0.textItem! } }

        let directory = spool.directory(for: shareID)
        guard mkdir(directory, 0o700) == 0 else {
            throw .stagingFailed(directory, reason: String(cString: strerror(errno)))
        }
        do {
            var items: [ShareItem] = []
            for (position, source) in sources.enumerated() {
                items.append(try source.stage(to: spool.path(for: shareID, position: position), limits: limits))
            }
            // One flush for the whole share: the copies are on disk before the share is acknowledged.
            let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            if fd >= 0 { KernelCopy.syncFileSystem(of: fd); close(fd) }
            return items
        } catch {
            spool.remove(shareID: shareID)
            throw error
        }
    }
}

/// Where one item's bytes come from, checked but not yet copied.
enum FileSource {
    case local(LocalFile, uri: String)
    case remote(uri: String)
    case inline(ShareItem)

    var isFile: Bool { if case .inline = self { return false }; return true }
    var textItem: ShareItem? { if case .inline(let item) = self { return item }; return nil }

    static func resolve(_ item: SharePlan.Item, limits: Limits) throws(ShareError) -> FileSource {
        switch item {
        case .text(let text): return .inline(.text(text))
        case .link(let url): return .inline(.link(url))
        case .file(let uri):
            guard let scheme = SharePlan.uriScheme(uri) else {
                throw .invalidURI(uri, reason: "it has no scheme such as file://")
            }
            if scheme == "file" {
                guard let (path, host) = FileURI.path(of: uri) else {
                    throw .invalidURI(uri, reason: "it is not a valid file: URI")
                }
                if let host, !host.isEmpty, host != "localhost" { throw .remoteHost(uri, host: host) }
                return .local(try LocalFile.check(path, limits: limits), uri: uri)
            }
            guard FileURI.readableSchemes.contains(scheme) else { throw .unsupportedScheme(uri, scheme: scheme) }
            return .remote(uri: uri)
        }
    }

    func stage(to destination: String, limits: Limits) throws(ShareError) -> ShareItem {
        switch self {
        case .inline(let item): return item
        case .local(let file, let uri):
            let leading = try file.copy(to: destination, limits: limits)
            let name = Self.baseName(file.path)
            return ShareItem(kind: .file, name: name, contentType: ContentType.guess(name: name, leadingBytes: leading),
                             size: file.size, uri: uri)
        case .remote(let uri):
            return try RemoteStaging.copy(uri: uri, to: destination, limits: limits)
        }
    }

    static func baseName(_ path: String) -> String {
        path.split(separator: "/", omittingEmptySubsequences: true).last.map(String.init) ?? path
    }
}
