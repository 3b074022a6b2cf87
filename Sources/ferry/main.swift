import FerryCLI
import FerryService
import GLibAdapter

// The person's language first: every sentence after this is in it (po/, GLibAdapter's Gettext).
Gettext.start()

// The command line is a client of the service and does not link it; `ferry service` comes here.
// It runs on the main thread, whose main loop the service spins: GLibMain is this thread's to take.
FerryCommand.runFromProcessArguments(service: { idle, ifPending in
    GLibMain.assumeIsolated { ServiceMain.start(idleTimeout: idle, ifPending: ifPending) }
})
