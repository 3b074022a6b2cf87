// ferry-ui: Ferry's share dialog, sign-in window and main window (GTK 4), a D-Bus client of the
// Ferry service. See `ferry-ui --help` and ferry-ui(1).
import FerryUI
import GLibAdapter
#if canImport(Glibc)
import Glibc
#endif

// The person's language first: every label after this is in it (po/, GLibAdapter's Gettext).
Gettext.start()

// The main thread is where GTK's main loop runs: the UI's actor (GLibMain).
exit(GLibMain.assumeIsolated { FerryUIApplication().run(arguments: CommandLine.arguments) })
