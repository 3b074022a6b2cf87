// The reference for Ferry's cold start (`make bench`): a Swift GApplication with Ferry's id that
// answers Open and does nothing else — no database, no staging, no sender. `gio open` against it,
// cold, is the floor for Ferry's "cold gio open → committed share" on the same machine.
import CGLib
#if canImport(Glibc)
import Glibc
#endif

let flags = G_APPLICATION_IS_SERVICE.rawValue | G_APPLICATION_HANDLES_OPEN.rawValue
let application = g_application_new("io.github.ferryshare.Ferry", GApplicationFlags(rawValue: flags))!
let open:
    @convention(c) (
        UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, Int32, UnsafePointer<CChar>?,
        UnsafeMutableRawPointer?
    ) -> Void = { _, _, _, _, _ in }
g_signal_connect_data(
    UnsafeMutableRawPointer(application), "open", unsafeBitCast(open, to: GCallback.self),
    nil, nil, GConnectFlags(rawValue: 0))
g_application_set_inactivity_timeout(application, 2000)
exit(g_application_run(application, CommandLine.argc, CommandLine.unsafeArgv))
