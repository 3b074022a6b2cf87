import FerryContract
import FerryCore
import GLibAdapter
import GtkAdapter

/// "Use Another Device": Ferry's device verified by comparing seven emoji with another of the
/// person's devices. The service does the protocol (m.sas.v1); this follows it and asks the
/// person. Shown in place of the recovery key by the dialog's verify step and the verify window.
@GLibMain final class EmojiComparison {
    let root: Box
    /// Both devices confirmed and the other one signed Ferry's.
    var onVerified: () -> Void = {}
    /// Back to the recovery key (after Cancel, or from the end's "Use Recovery Key").
    var onBack: () -> Void = {}

    // ServiceClient has no emoji calls yet; Share1Client on the same shared session connection.
    private let client = try? Share1Client.session()
    /// Whose device is verified (a user id); nil: the account signed in last.
    var account: String?
    /// The running verification's id; "" before the service answered Start.
    private var id = ""
    private var running = false
    /// Bumped at each start and end, so that a late reply or poll of an earlier run changes nothing.
    private var generation = 0
    /// The step on screen (state + verification), so that a poll saying the same redraws nothing.
    private var shownStep = ""

    private let waiting: Box
    private let spinner = Spinner()
    private let waitingTitle = Label("", style: "title-4", alignment: 0.5)
    private let waitingDetail = Label("", style: "dim-label", alignment: 0.5)
    private let cancelButton = Button(tr("Cancel"))

    private let comparing: Box
    private let compareDetail = Label("", style: "dim-label", alignment: 0.5)
    private let grid = Box(.vertical, spacing: 18)
    private let decimal = Label("", style: "dim-label", alignment: 0.5)
    // TRANSLATORS: the answer when the emoji on both devices are the same.
    private let matchButton = Button(tr("They Match"), style: "suggested-action")
    private let mismatchButton = Button(tr("They Don’t Match"), style: "destructive-action")

    private let ended: Box
    private let reason = Label("", alignment: 0.5)
    private let backButton = Button(tr("Use Recovery Key"), style: "suggested-action")
    private let retryButton = Button(tr("Try Again"))

    init() {
        spinner.setSizeRequest(width: 32, height: 32)
        spinner.horizontalAlignment = .center
        spinner.setMargins(top: 12)
        waiting = Box(.vertical, spacing: 12, [spinner, waitingTitle, waitingDetail, Self.buttons([cancelButton])])

        grid.horizontalAlignment = .center
        grid.setMargins(top: 12, bottom: 6)
        grid.accessibleName = tr("Emoji to compare")
        decimal.addStyle("caption")
        comparing = Box(
            .vertical, spacing: 12, [compareDetail, grid, decimal, Self.buttons([matchButton, mismatchButton])])

        let warning = Icon(name: "dialog-warning-symbolic", pixelSize: 48)
        warning.addStyle("dim-label")
        ended = Box(.vertical, spacing: 12, [warning, reason, Self.buttons([backButton, retryButton])])

        root = Box(.vertical, spacing: 0, [waiting, comparing, ended])
        [waiting, comparing, ended].forEach { $0.isVisible = false }

        cancelButton.onClick { [weak self] in
            self?.cancel()
            self?.onBack()
        }
        matchButton.onClick { [weak self] in self?.answer(match: true) }
        mismatchButton.onClick { [weak self] in self?.answer(match: false) }
        backButton.onClick { [weak self] in self?.onBack() }
        retryButton.onClick { [weak self] in self?.start() }
        // Closing the window (or the dialog) while it runs: the other device is told at once
        // rather than after the service's ten minutes.
        root.on("unmap") { [weak self] in self?.cancel() }
    }

    /// Asks every other device of the person (no device id): the first to answer goes on.
    func start() {
        guard let client else { return end(tr("Ferry's service is not running.")) }
        generation += 1
        running = true
        id = ""
        shownStep = ""
        show(waiting)
        showWaiting(tr("Asking Your Other Devices…"), detail: "")
        cancelButton.grabFocus()
        let run = generation
        client.call(Share1.startEmojiVerification(deviceID: nil, account: account)) { [weak self] result in
            guard let self, self.generation == run else { return }
            switch result {
            case .success(let state):
                self.id = state.id
                self.apply(state)
                if self.running { self.poll(run) }
            case .failure(let error):
                self.end(error.sentence)
            }
        }
    }

    /// Cancels on both devices when one runs; nothing otherwise.
    func cancel() {
        guard running else { return }
        running = false
        generation += 1
        if let client, !id.isEmpty {
            client.call(Share1.cancelEmojiVerification(id)) { result in
                if case .failure(let error) = result {
                    Log.error("ferry-ui: cancelling the emoji verification: \(error)")
                }
            }
        }
    }

    // MARK: Following the service

    /// ServiceClient does not follow EmojiVerificationChanged: GetEmojiVerification a few times a
    /// second, each after the last answered.
    private func poll(_ run: Int) {
        MainContext.after(milliseconds: 300) { [weak self] in
            guard let self, self.generation == run, let client = self.client else { return }
            client.call(Share1.getEmojiVerification()) { [weak self] result in
                guard let self, self.generation == run else { return }
                switch result {
                case .success(let state?) where state.id == self.id: self.apply(state)
                // Another verification began (the service runs one at a time): ours is over.
                case .success: self.end(tr("The verification ended before the emoji were compared."))
                case .failure(let error): self.end(error.sentence)
                }
                if self.running { self.poll(run) }
            }
        }
    }

    private func apply(_ state: EmojiVerificationReport) {
        let step = state.state + (state.verification ?? "")
        guard step != shownStep else { return }
        shownStep = step
        let device = Self.deviceName(state)
        switch state.state {
        case "waiting":
            showWaiting(
                tr("Accept the request on your other device"),
                detail: tr(
                    "Open Element (or another Matrix app) where you are signed in: it asks whether to verify this device. Then compare the emoji."
                ))
        case "comparing":
            showEmoji(state, device: device)
        case "confirmed":
            // TRANSLATORS: {device} is the other device's name in quotes, or "your other device".
            let detail = tr("Confirm on {device} that the emoji match.", ["device": device])
            showWaiting(tr("Waiting for your other device…"), detail: detail)
        case "done" where state.verification == nil:
            // TRANSLATORS: {device} is the other device's name in quotes, or "your other device".
            let detail = tr("Both devices confirmed: {device} now signs this one.", ["device": device])
            showWaiting(tr("Waiting for your other device…"), detail: detail)
        case "done" where state.verification == "verified":
            running = false
            generation += 1
            onVerified()
        case "done":
            end(
                tr(
                    // TRANSLATORS: {device} is the other device's name in quotes, or "your other device".
                    "Both devices confirmed the emoji, but {device} did not sign this one: it can only when it holds your account’s cross-signing keys (Element does once it is verified itself).",
                    ["device": device]))
        case "cancelled":
            end(state.reason ?? tr("The verification was cancelled: nothing was verified."))
        default:
            break
        }
    }

    // MARK: What is shown

    private func show(_ part: Box) {
        for other in [waiting, comparing, ended] { other.isVisible = other === part }
        spinner.isSpinning = part === waiting
    }

    private func showWaiting(_ title: String, detail: String) {
        show(waiting)
        waitingTitle.text = title
        waitingTitle.accessibleName = title
        waitingDetail.text = detail
        waitingDetail.isVisible = !detail.isEmpty
    }

    private func showEmoji(_ state: EmojiVerificationReport, device: String) {
        compareDetail.text = tr(
            // TRANSLATORS: {device} is the other device's name in quotes, or "your other device".
            "Compare these emoji with the ones {device} shows. They must be the same, in the same order.",
            ["device": device])
        grid.removeAll()
        let cells = zip(state.emoji, state.emojiNames).enumerated().map {
            Self.cell(
                index: $0.offset, picture: $0.element.0,
                name: Translation.text(dynamic: $0.element.1))
        }
        // Four over three, as Element and GNOME's Fractal lay them out: large enough to read at a glance.
        for row in [Array(cells.prefix(4)), Array(cells.dropFirst(4))] where !row.isEmpty {
            let line = Box(.horizontal, spacing: 12, row)
            line.horizontalAlignment = .center
            grid.append(line)
        }
        // TRANSLATORS: {numbers} are three four-digit numbers, the other way to compare.
        decimal.text = state.decimal.map { tr("Or compare these numbers: {numbers}", ["numbers": $0]) } ?? ""
        decimal.isVisible = !decimal.text.isEmpty
        [matchButton, mismatchButton].forEach {
            $0.isSensitive = true; $0.isBusy = false
        }
        show(comparing)
        matchButton.grabFocus()
    }

    /// One emoji over its name; its accessible name carries both, and its place in the seven.
    private static func cell(index: Int, picture: String, name: String) -> Widget {
        let image = Label(picture, style: "large-title", wraps: false, alignment: 0.5)
        image.accessibleName = tr(
            // TRANSLATORS: the accessible name of one of the seven emoji; {number} is its place (1 to 7), {emoji} the
            // picture and {name} its name.
            "Emoji {number}: {emoji} {name}", ["number": String(index + 1), "emoji": picture, "name": name])
        let caption = Label(name, style: "caption", alignment: 0.5)
        caption.isHiddenFromAccessibility = true
        let cell = Box(.vertical, spacing: 4, [image, caption])
        cell.setSizeRequest(width: 76)
        return cell
    }

    private func answer(match: Bool) {
        guard let client, running else { return }
        (match ? matchButton : mismatchButton).isBusy = true
        [matchButton, mismatchButton].forEach { $0.isSensitive = false }
        let run = generation
        client.call(Share1.answerEmojiVerification(id, match: match)) { [weak self] result in
            guard let self, self.generation == run else { return }
            switch result {
            case .success(let state): self.apply(state)
            case .failure(let error): self.end(error.sentence)
            }
        }
    }

    /// The end without verification: why, and the way back to the recovery key.
    private func end(_ sentence: String) {
        running = false
        generation += 1
        reason.text = sentence
        reason.accessibleName = tr("Error: {message}", ["message": sentence])
        show(ended)
        backButton.grabFocus()
    }

    private static func buttons(_ buttons: [Button]) -> Box {
        buttons.forEach { $0.addStyle("pill") }
        let box = Box(.vertical, spacing: 12, buttons)
        box.horizontalAlignment = .center
        box.setMargins(top: 12)
        return box
    }

    private static func deviceName(_ state: EmojiVerificationReport) -> String {
        let (name, id) = (state.deviceName, state.deviceID)
        // TRANSLATORS: "your other device" goes into sentences where a device's name could stand
        // ("Confirm on your other device that the emoji match."); {id} is a device id, "ABCDEFGHIJ".
        if name.isEmpty { return id.isEmpty ? tr("your other device") : tr("your other device ({id})", ["id": id]) }
        // TRANSLATORS: a device's name in quotation marks, as it stands in a sentence.
        return tr("“{name}”", ["name": name])
    }
}
