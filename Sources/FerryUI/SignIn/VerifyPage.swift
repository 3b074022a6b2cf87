import FerryCore
import GLibAdapter
import GtkAdapter

/// "Verify this device": the account's recovery key (or its passphrase) in one field, so that
/// the person's other clients show what Ferry sends as from a device they verified. Skippable:
/// sharing works either way. Used after sign-in in the dialog and as its own window. "Use Another
/// Device" compares emoji with another of the person's devices instead, in place of the key.
@GLibMain final class VerifyPage {
    let root: Box
    // TRANSLATORS: "EsTc" is how every recovery key begins; keep it.
    let key = TextField(.password, placeholder: tr("EsTc … or your passphrase"))
    let verifyButton = Button(tr("Verify"), style: "suggested-action")
    let skipButton = Button(tr("Skip"))
    let anotherDeviceButton = Button(tr("Use Another Device"))
    private let error = Label("", style: "error")
    private let service: ServiceClient
    private let icon = Icon(name: "security-high-symbolic", pixelSize: 64)
    /// Everything of the recovery key's way, hidden while the emoji are compared.
    private let keyWay: Box
    private let emoji = EmojiComparison()

    /// Called when the page is done: true once verified, false when skipped.
    var onDone: (Bool) -> Void = { _ in }

    /// Whose device is verified (a user id); nil: the account signed in last.
    private let account: String?

    init(service: ServiceClient, account: String? = nil) {
        self.service = service
        self.account = account
        emoji.account = account
        icon.addStyle("dim-label")
        let title = Label(tr("Verify This Device"), style: "title-1", alignment: 0.5)
        let explanation = Label(
            tr(
                "Enter your recovery key so that your other devices trust what Ferry sends. Without it, they may show a warning next to it."
            ),
            style: "dim-label", alignment: 0.5)
        let hint = Label(
            tr(
                // TRANSLATORS: "Settings → Encryption" are Element's menus; use Element's words for them in your
                // language.
                "You saved the recovery key when you set up secure backup (in Element: Settings → Encryption). Ferry does not keep it."
            ),
            style: "dim-label", alignment: 0.5)
        hint.addStyle("caption")
        key.accessibleName = tr("Recovery key or passphrase")
        let field = Box(.vertical, spacing: 6, [Label(tr("Recovery key or passphrase"), style: "heading"), key])
        error.isVisible = false
        error.accessibleName = tr("Error")
        verifyButton.addStyle("pill")
        skipButton.addStyle("pill")
        anotherDeviceButton.addStyle("pill")
        anotherDeviceButton.setAccessibleDescription(
            tr("Compare emoji with Element or another app where you are signed in"))
        let buttons = Box(.vertical, spacing: 12, [verifyButton, anotherDeviceButton, skipButton])
        buttons.horizontalAlignment = .center
        buttons.setMargins(top: 12)

        keyWay = Box(.vertical, spacing: 12, [explanation, field, hint, error, buttons])
        emoji.root.isVisible = false
        // With several accounts, the page says whose device it verifies.
        let whose = Label(account.map(SafeDisplay.escaped) ?? "", style: "dim-label", alignment: 0.5)
        whose.isVisible = account != nil
        let column = Box(.vertical, spacing: 12, [icon, title, whose, keyWay, emoji.root])
        column.setMargins(top: 24, bottom: 24, start: 12, end: 12)
        root = Box(.vertical)
        let scroller = ScrolledWindow(Clamp(column, maximumWidth: 420))
        scroller.expandsVertically = true
        root.append(scroller)

        key.onActivate { [weak self] in self?.verify() }
        key.onChange { [weak self] in self?.clearError() }
        verifyButton.onClick { [weak self] in self?.verify() }
        skipButton.onClick { [weak self] in
            // What was typed does not stay in a hidden field for the dialog's lifetime.
            self?.key.text = ""
            self?.onDone(false)
        }
        anotherDeviceButton.onClick { [weak self] in self?.useAnotherDevice() }
        emoji.onVerified = { [weak self] in self?.onDone(true) }
        emoji.onBack = { [weak self] in self?.showKeyWay() }
    }

    /// Focus to the key field.
    func focus() {
        key.grabFocus()
    }

    private func verify() {
        // Enter reaches the window's default (Verify) also while the emoji are shown.
        guard keyWay.isVisible, !verifyButton.isBusy else { return }
        guard !key.text.trimmingWhitespace().isEmpty else {
            return showError(tr("Enter your recovery key or passphrase."))
        }
        clearError()
        verifyButton.isBusy = true
        [key, skipButton].forEach { $0.isSensitive = false }
        service.verifyDevice(keyOrPassphrase: key.text, account: account) { [weak self] result in
            guard let self else { return }
            self.verifyButton.isBusy = false
            [self.key, self.skipButton].forEach { $0.isSensitive = true }
            switch result {
            case .success(let state) where state == "verified":
                self.key.text = ""
                self.onDone(true)
            case .success:
                self.showError(tr("The homeserver does not show this device as verified yet. Try again in a moment."))
            case .failure(let error):
                self.key.text = ""
                self.showError(error.sentence)
            }
        }
    }

    private func useAnotherDevice() {
        key.text = ""
        clearError()
        [icon, keyWay].forEach { $0.isVisible = false }
        emoji.root.isVisible = true
        emoji.start()
    }

    private func showKeyWay() {
        emoji.root.isVisible = false
        [icon, keyWay].forEach { $0.isVisible = true }
        key.grabFocus()
    }

    private func showError(_ text: String) {
        error.text = text
        error.accessibleName = tr("Error: {message}", ["message": text])
        error.isVisible = true
        key.isInvalid = true
        key.grabFocus()
    }

    private func clearError() {
        error.isVisible = false
        key.isInvalid = false
    }
}
