import FerryContract
import FerryCore
import Foundation
import GLibAdapter
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// `ferry verify --emoji`: the service compares emoji with another of the person's devices; this
/// shows them, asks whether they match, and says how it ended. The service does the protocol;
/// the command only follows it (GetEmojiVerification, a few times a second) and answers.
///
/// Ctrl-C cancels the verification on both devices before the command ends.
struct EmojiVerificationRun {
    let deviceID: String?
    /// Whose device (nil: the account signed in last's).
    let account: String?
    let json: Bool

    /// How often the state is read while waiting for the other device.
    private static let poll: UInt32 = 250_000

    func run() throws(CommandFailure) {
        let client = try Share1Client.forCommand()
        Interrupt.catchInterrupt()
        let state = try client.run(Share1.startEmojiVerification(deviceID: deviceID, account: account))
        let id = state.id
        do {
            try follow(state, id: id, client: client)
        } catch {
            // However the command ends, the other device is not left waiting ten minutes.
            if error.status != 130, let now = try? client.run(Share1.getEmojiVerification()), now.id == id,
                !now.hasEnded
            {
                _ = try? client.run(Share1.cancelEmojiVerification(id))
            }
            throw error
        }
    }

    private func follow(_ first: EmojiVerificationReport, id: String, client: Share1Client) throws(CommandFailure) {
        var state = first
        var shown = ""
        while true {
            if Interrupt.happened {
                state = (try? client.run(Share1.cancelEmojiVerification(id))) ?? state
                tell(state, previous: &shown)
                throw CommandFailure(status: 130, message: tr("cancelled; nothing was verified."))
            }
            tell(state, previous: &shown)
            switch state.state {
            case "comparing":
                let match = try ask()
                if Interrupt.happened { continue }
                state = try client.run(Share1.answerEmojiVerification(id, match: match))
                continue
            case "done" where state.verification != nil:
                return try finish(state)
            case "cancelled":
                throw CommandFailure(
                    status: ExitStatus.unavailable,
                    message: SafeDisplay.escaped(state.reason ?? tr("the verification was cancelled.")))
            default:
                usleep(Self.poll)
            }
            // Another verification began meanwhile (the service runs one at a time): not ours.
            guard let now = try client.run(Share1.getEmojiVerification()), now.id == id else {
                throw CommandFailure(status: ExitStatus.unavailable, message: tr("the verification ended."))
            }
            state = now
        }
    }

    /// Says what changed: for a person, each step once; with --json, each state as a line.
    private func tell(_ state: EmojiVerificationReport, previous: inout String) {
        let step = state.state + (state.verification ?? "")
        guard step != previous else { return }
        previous = step
        if json {
            Terminal.outputNow(JSONText.line(Self.object(state)))
            return
        }
        let device = Self.deviceName(state)
        switch state.state {
        case "waiting" where state.deviceID.isEmpty:
            Terminal.note(
                tr(
                    "Asked your other devices. Accept the request on one of them (in Element, a prompt appears), then compare the emoji."
                ))
        // TRANSLATORS: {device} is the other device: “Phone” (ABCDEFGH), or your other device.
        case "waiting": Terminal.note(tr("Waiting for {device} to accept…", ["device": device]))
        case "comparing":
            Terminal.note(
                // TRANSLATORS: {device} is the other device: “Phone” (ABCDEFGH), or your other device.
                tr("Compare these emoji with the ones {device} shows, in the same order:", ["device": device]) + "\n")
            Terminal.outputNow(
                zip(state.emoji, state.emojiNames).map { "\($0)  \(Translation.text(dynamic: $1))" }.joined(
                    separator: "\n"))
            // TRANSLATORS: {numbers} are three numbers to compare instead of the emoji.
            Terminal.note("\n" + tr("(As numbers: {numbers})", ["numbers": state.decimal ?? ""]))
        // TRANSLATORS: {device} is the other device: “Phone” (ABCDEFGH), or your other device.
        case "confirmed": Terminal.note(tr("Waiting for {device} to confirm…", ["device": device]))
        case "done" where state.verification == nil:
            // TRANSLATORS: {device} is the other device: “Phone” (ABCDEFGH), or your other device.
            Terminal.note(tr("Both devices confirmed; waiting for {device} to sign this one…", ["device": device]))
        default: break
        }
    }

    /// The person's answer, from the terminal or, in scripts, a line on standard input.
    private func ask() throws(CommandFailure) -> Bool {
        // A "y" typed before the emoji were there is no answer to them.
        if isatty(0) != 0 { tcflush(0, TCIFLUSH) }
        while true {
            // TRANSLATORS: the answer is read as y, yes, n or no, in English: keep [y/n] as it is.
            if !json { Terminal.standardError(tr("Do they match? [y/n] ")) }
            guard let line = readLine() else {
                if Interrupt.happened { return false }
                throw CommandFailure(
                    status: ExitStatus.usage, message: tr("no answer on standard input; nothing was verified."))
            }
            switch line.trimmingCharacters(in: .whitespaces).lowercased() {
            case "y", "yes": return true
            case "n", "no": return false
            default:
                if !json {
                    Terminal.note(
                        // TRANSLATORS: y and n are what the person types; the command reads them in English.
                        tr("Answer y if every emoji and its place are the same on both devices, n otherwise."))
                }
            }
        }
    }

    private func finish(_ state: EmojiVerificationReport) throws(CommandFailure) {
        guard state.verification == "verified" else {
            throw CommandFailure(
                status: ExitStatus.unavailable,
                message: tr(
                    // TRANSLATORS: {device} is the other device: “Phone” (ABCDEFGH), or your other device.
                    "both devices confirmed the emoji, but {device} did not sign this one: it can only when it holds your account's cross-signing keys (Element does once it is verified itself).",
                    ["device": Self.deviceName(state)]))
        }
        if !json {
            Terminal.note(
                tr("This device is verified: your other clients will show what Ferry sends as from a device you trust.")
            )
        }
    }

    private static func deviceName(_ state: EmojiVerificationReport) -> String {
        let (name, id) = (state.deviceName, state.deviceID)
        // TRANSLATORS: goes into sentences such as "Waiting for {device} to accept…"; {id} is a device id (ABCDEFGH).
        if name.isEmpty { return id.isEmpty ? tr("your other device") : tr("your other device ({id})", ["id": id]) }
        return "\u{201C}\(SafeDisplay.escaped(name))\u{201D} (\(id))"
    }

    private static func object(_ state: EmojiVerificationReport) -> [String: Any] {
        var object: [String: Any] = [:]
        for (key, value) in state.dictionary {
            let name = key.replacingOccurrences(of: "-", with: "_")
            if let text = value.stringValue {
                object[name] = text
            } else if let list = value.stringsValue {
                object[name] = list
            }
        }
        return object
    }
}

/// Ctrl-C (or the terminal closing, or a kill) while a verification runs: noted, so that the
/// verification is cancelled on both devices before the command ends. Without SA_RESTART, so
/// that a prompt waiting on the terminal returns at once; once only (SA_RESETHAND), so that a
/// second Ctrl-C ends the command even if the cancel hangs.
enum Interrupt {
    private static let flag = Atomic<Bool>(false)

    static var happened: Bool { flag.load(ordering: .relaxed) }

    static func catchInterrupt() {
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in Interrupt.flag.store(true, ordering: .relaxed) }
        sigemptyset(&action.sa_mask)
        action.sa_flags = Int32(truncatingIfNeeded: SA_RESETHAND)
        for signal in [SIGINT, SIGTERM, SIGHUP] { sigaction(signal, &action, nil) }
    }
}
