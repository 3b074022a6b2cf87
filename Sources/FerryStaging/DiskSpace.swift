import FerryCore
#if canImport(Glibc)
import Glibc
#endif

/// Free space on the spool's file system, checked before anything is copied.
enum DiskSpace {
    /// Refuses (NotEnoughSpace) when `needed` bytes would leave less than `reserve` free. A file
    /// system that cannot say is not refused on its word: the copy itself still fails cleanly
    /// (StagingFailed, with ENOSPC's sentence) and is removed.
    static func check(needed: UInt64, in directory: String, reserve: UInt64) throws(StagingError) {
        var info = statvfs()
        guard statvfs(directory, &info) == 0 else { return }
        let (available, overflow) = UInt64(info.f_bavail).multipliedReportingOverflow(by: UInt64(info.f_frsize))
        guard !overflow else { return }
        let (wanted, tooMuch) = needed.addingReportingOverflow(reserve)
        if tooMuch || wanted > available {
            throw .notEnoughSpace(needed: needed, reserve: reserve, available: available)
        }
    }
}
