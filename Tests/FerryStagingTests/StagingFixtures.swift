import FerryCore
import FerryStaging
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A directory of its own for each test, holding the originals and the spool; removed afterwards.
final class StagingWorkspace: Sendable {
    let path: String
    let spool: Spool

    init() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "ferry-staging-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        path = url.path
        spool = try Spool(root: path + "/state/ferry/spool")
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// Writes `bytes` to a new file named `name` in the workspace and returns its path.
    @discardableResult
    func write(_ name: String, _ bytes: [UInt8]) throws -> String {
        let file = path + "/" + name
        try Data(bytes).write(to: URL(fileURLWithPath: file))
        return file
    }

    @discardableResult
    func write(_ name: String, text: String) throws -> String { try write(name, Array(text.utf8)) }

    func stager(_ limits: Limits = Limits()) -> Stager { Stager(spool: spool, limits: limits) }

    /// Plans and stages `uris` as one share.
    func stage(_ uris: [String], shareID: String, limits: Limits = Limits()) throws -> [ShareItem] {
        let plan = try SharePlan(request: ShareRequest(uris: uris, source: .open), limits: limits)
        return try stager(limits).stage(plan, shareID: shareID)
    }

    /// The error staging `uris` fails with, as a client is told it, or nil.
    func stagingError(
        _ uris: [String], shareID: String = "01kstagingerrorxxxxxxxxxxx", limits: Limits = Limits()
    ) -> ShareError? {
        let plan: SharePlan
        do { plan = try SharePlan(request: ShareRequest(uris: uris, source: .open), limits: limits) } catch {
            return error
        }
        do {
            _ = try stager(limits).stage(plan, shareID: shareID)
            return nil
        } catch {
            // As intake answers it: the contract's error, with its name and sentence.
            return ShareError(error)
        }
    }
}

/// A `file://` URI made by Foundation, not by Ferry, as a file manager would send it.
func fileURI(_ path: String) -> String { URL(fileURLWithPath: path).absoluteString }

func exists(_ path: String) -> Bool {
    var info = stat()
    return lstat(path, &info) == 0
}

func permissions(of path: String) -> mode_t {
    var info = stat()
    guard stat(path, &info) == 0 else { return 0o7777 }
    return info.st_mode & 0o7777
}

func contents(of path: String) -> [UInt8]? {
    FileManager.default.contents(atPath: path).map { Array($0) }
}

/// A complete 1×1 PNG (signature, IHDR, IDAT, IEND, with valid CRCs).
let onePixelPNG: [UInt8] = Array(
    Data(
        base64Encoded:
            "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==")!)
