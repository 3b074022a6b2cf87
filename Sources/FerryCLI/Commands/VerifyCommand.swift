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
        abstract: tr("Verify this device with your account's recovery key, or by comparing emoji."),
        // Two paragraphs, two messages for translators.
        discussion: tr(
            "Your other Matrix clients then show what Ferry sends as coming from a device you verified. Ferry reads the account's self-signing key from its secret storage with the recovery key (or its passphrase), signs this device with it, and keeps nothing of either. On a terminal Ferry asks for the key without echo; in scripts give it on standard input, never as an argument."
        )
            + "\n\n"
            + tr(
                // TRANSLATORS: "y" is what the person types for yes: the command reads y, yes, n and no, in English.
                "Without the recovery key at hand, --emoji asks your other devices (Element shows a prompt): accept there, compare the seven emoji on both screens, and answer y if they match. The other device then signs this one. With --json, each step is a line of JSON, and the answer (yes or no) is read from standard input."
            ))

    @Flag(
        help: ArgumentHelp(tr("Read the passphrase the recovery key was made from (told apart by shape without it).")))
    var passphrase = false

    @Flag(
        name: .customLong("set-up"),
        help: ArgumentHelp(tr("For an account without cross-signing: set it up, with a new recovery key printed once."))
    )
    var setUp = false

    @Flag(
        help: ArgumentHelp(
            tr("With --set-up: read the account's password from standard input, for servers that ask for it.")))
    var passwordStdin = false

    @Flag(help: ArgumentHelp(tr("Compare emoji with another of your devices instead of giving the recovery key.")))
    var emoji = false

    @Option(
        name: .customLong("device"),
        help: ArgumentHelp(
            tr("With --emoji: the device to verify with (others are not asked)."),
            valueName: "device-id"))
    var deviceID: String?

    @OptionGroup var one: OneAccountOption

    @OptionGroup var output: OutputOptions

    func validate() throws {
        if setUp && passphrase {
            throw ValidationError(tr("--set-up makes a new recovery key; it takes no passphrase."))
        }
        if passwordStdin && !setUp { throw ValidationError(tr("--password-stdin goes with --set-up.")) }
        if emoji && (setUp || passphrase) {
            throw ValidationError(tr("--emoji needs no key: it compares emoji with another of your devices."))
        }
        if deviceID != nil && !emoji { throw ValidationError(tr("--device goes with --emoji.")) }
    }

    func execute() throws(CommandFailure) {
        let account = try one.resolved(try Share1Client.forCommand())
        if emoji { return try EmojiVerificationRun(deviceID: deviceID, account: account, json: output.json).run() }
        if setUp { return try setUpCrossSigning(account: account) }
        let what: StandardInputSecret = passphrase ? .passphrase : .keyOrPassphrase
        let secret =
            isatty(0) != 0
            // TRANSLATORS: questions on the terminal; the answer is typed after them, on the same line.
            ? try Prompt.secret(passphrase ? tr("Passphrase: ") : tr("Recovery key or passphrase: "))
            : try LoginCommand.secretFromStandardInput(what)
        let state = try Share1Client.forCommand().run(
            Share1.verifyDevice(passphrase ? .passphrase(secret) : .either(secret), account: account))
        if output.json {
            Terminal.output(JSONText.encode(["verification": state]))
        } else {
            Terminal.note(
                state == "verified"
                    ? tr(
                        "This device is verified: your other clients will show what Ferry sends as from a device you trust."
                    )
                    : tr("The signature was uploaded, but the homeserver does not show this device as verified yet."))
        }
    }

    /// The recovery key alone on standard output (a script keeps it), what it is on standard error.
    /// Servers that follow MSC3967 take an account's first identity without the password; the
    /// others ask, and then so does Ferry (on a terminal), or it comes from standard input.
    private func setUpCrossSigning(account: String?) throws(CommandFailure) {
        let client = try Share1Client.forCommand()
        var password = passwordStdin ? try LoginCommand.secretFromStandardInput(.password) : nil
        var result: CrossSigningSetUp
        do {
            result = try client.run(Share1.setUpCrossSigning(password: password, account: account))
        } catch let error where password == nil && error.errorName == "PasswordRequired" && isatty(0) != 0 {
            // TRANSLATORS: a question on the terminal; the answer is typed after it, on the same line.
            password = try Prompt.secret(tr("The homeserver asks for the password of your Matrix account: "))
            result = try client.run(Share1.setUpCrossSigning(password: password, account: account))
        }
        let (key, state) = (result.recoveryKey, result.verification)
        if output.json {
            Terminal.output(JSONText.encode(["recovery_key": key, "verification": state]))
        } else {
            Terminal.note(
                tr(
                    "Cross-signing is set up, and this device is verified with it. Your recovery key is below: write it down or keep it in a password manager. It is shown only now, and Ferry does not keep it."
                ))
            Terminal.output(key)
        }
    }
}
