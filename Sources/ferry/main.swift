import FerryCLI
import FerryService

// The command line is a client of the service and does not link it; `ferry service` comes here.
FerryCommand.runFromProcessArguments(service: { ServiceMain.start(idleTimeout: $0, ifPending: $1) })
