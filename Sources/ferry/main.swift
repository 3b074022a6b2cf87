import FerryCLI

FerryCommand.runFromProcessArguments()
