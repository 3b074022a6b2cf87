import ArgumentParser
import FerryContract
import FerryCore
import Foundation
import GLibAdapter
#if canImport(Glibc)
import Glibc
#endif

struct VerifyCommand: FerrySubcommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Verify this device with your account's recovery key.",
        discussion: """
        Your other Matrix clients then show what Ferry sends as coming from a device you verified. \
        Ferry reads the account's self-signing key from its secret storage with the recovery key \
        (or its passphrase), signs this device with it, and keeps nothing of either. On a terminal \
        Ferry asks for the key without echo; in scripts give it on standard input, never as an \
        argument.
        """)

    @Flag(help: "Read the passphrase the recovery key was made from (told apart by shape without it).")
    var passphrase = false

    @OptionGroup var output: OutputOptions

    func execute() throws(CommandFailure) {
        let what = passphrase ? "passphrase" : "recovery key or passphrase"
        let secret = isatty(0) != 0 ? try Prompt.secret(passphrase ? "Passphrase: " : "Recovery key or passphrase: ")
                                    : try LoginCommand.secretFromStandardInput(what)
        let result = try Share1Client.forCommand().run(Share1.verifyDevice([passphrase ? "passphrase" : "key-or-passphrase": .string(secret)]))
        let state = result["verification"]?.stringValue ?? ""
        if output.json {
            Terminal.output(JSONText.encode(["verification": state]))
        } else {
            Terminal.note(state == "verified" ? "This device is verified: your other clients will show what Ferry sends as from a device you trust."
                                              : "The signature was uploaded, but the homeserver does not show this device as verified yet.")
        }
    }
}
