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
        abstract: "Verify this device with your account's recovery key, or by comparing emoji.",
        discussion: """
        Your other Matrix clients then show what Ferry sends as coming from a device you verified. \
        Ferry reads the account's self-signing key from its secret storage with the recovery key \
        (or its passphrase), signs this device with it, and keeps nothing of either. On a terminal \
        Ferry asks for the key without echo; in scripts give it on standard input, never as an \
        argument.

        Without the recovery key at hand, --emoji asks your other devices (Element shows a \
        prompt): accept there, compare the seven emoji on both screens, and answer y if they \
        match. The other device then signs this one. With --json, each step is a line of JSON, \
        and the answer (yes or no) is read from standard input.
        """)

    @Flag(help: "Read the passphrase the recovery key was made from (told apart by shape without it).")
    var passphrase = false

    @Flag(name: .customLong("set-up"),
          help: "For an account without cross-signing: set it up, with a new recovery key printed once.")
    var setUp = false

    @Flag(help: "With --set-up: read the account's password from standard input, for servers that ask for it.")
    var passwordStdin = false

    @Flag(help: "Compare emoji with another of your devices instead of giving the recovery key.")
    var emoji = false

    @Option(name: .customLong("device"), help: ArgumentHelp("With --emoji: the device to verify with (others are not asked).",
                                                             valueName: "device-id"))
    var deviceID: String?

    @OptionGroup var output: OutputOptions

    func validate() throws {
        if setUp && passphrase { throw ValidationError("--set-up makes a new recovery key; it takes no passphrase.") }
        if passwordStdin && !setUp { throw ValidationError("--password-stdin goes with --set-up.") }
        if emoji && (setUp || passphrase) { throw ValidationError("--emoji needs no key: it compares emoji with another of your devices.") }
        if deviceID != nil && !emoji { throw ValidationError("--device goes with --emoji.") }
    }

    func execute() throws(CommandFailure) {
        if emoji { return try EmojiVerificationRun(deviceID: deviceID, json: output.json).run() }
        if setUp { return try setUpCrossSigning() }
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

    /// The recovery key alone on standard output (a script keeps it), what it is on standard error.
    /// Servers that follow MSC3967 take an account's first identity without the password; the
    /// others ask, and then so does Ferry (on a terminal), or it comes from standard input.
    private func setUpCrossSigning() throws(CommandFailure) {
        let client = try Share1Client.forCommand()
        var password = passwordStdin ? try LoginCommand.secretFromStandardInput("password") : nil
        var result: [String: Variant]
        do {
            result = try client.run(Share1.setUpCrossSigning(password: password))
        } catch where password == nil && error.errorName == "PasswordRequired" && isatty(0) != 0 {
            password = try Prompt.secret("The homeserver asks for the password of your Matrix account: ")
            result = try client.run(Share1.setUpCrossSigning(password: password))
        }
        let key = result["recovery-key"]?.stringValue ?? ""
        let state = result["verification"]?.stringValue ?? ""
        if output.json {
            Terminal.output(JSONText.encode(["recovery_key": key, "verification": state]))
        } else {
            Terminal.note("Cross-signing is set up, and this device is verified with it. Your recovery key is below: "
                          + "write it down or keep it in a password manager. It is shown only now, and Ferry does not keep it.")
            Terminal.output(key)
        }
    }
}
