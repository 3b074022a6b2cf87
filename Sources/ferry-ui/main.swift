// ferry-ui: Ferry's share dialog, sign-in window and main window (GTK 4), a D-Bus client of the
// Ferry service. See `ferry-ui --help` and ferry-ui(1).
import FerryUI
#if canImport(Glibc)
import Glibc
#endif

let application = FerryUIApplication()
exit(application.run(arguments: CommandLine.arguments))
