import FerryCore
import GLibAdapter
import GtkAdapter

/// "Set Up Recovery", for an account without cross-signing (from the main window): Ferry makes
/// the account's identity and a recovery key, and shows the key once, to be saved by the person.
/// Never started without the person pressing the button; the password only if the server asks.
@GLibMain final class SetUpRecoveryWindow {
    private let window: Window
    private let service: ServiceClient
    private let stack = Stack()
    private let password = TextField(.password, placeholder: tr("Password"))
    private let passwordBox: Box
    private let makeButton = Button(tr("Make a Recovery Key"), style: "suggested-action")
    private let error = Label("", style: "error")
    private let keyLabel = Label("", style: "title-3", alignment: 0.5)
    private let copyButton = Button(tr("Copy"))
    private let doneButton = Button(tr("I Have Saved It"), style: "suggested-action")
    var onClosed: () -> Void = {}

    init(application: FerryUIApplication, service: ServiceClient) {
        self.service = service
        window = Window(application: application.application, title: tr("Set Up Recovery"), width: 480, height: 560)
        window.headerBar.setTitle(tr("Set Up Recovery"))

        password.accessibleName = tr("Password")
        passwordBox = Box(
            .vertical, spacing: 6, [Label(tr("The homeserver asks for your password"), style: "heading"), password])
        passwordBox.isVisible = false
        error.isVisible = false
        error.accessibleName = tr("Error")
        makeButton.addStyle("pill")
        let ask = Self.page(
            iconName: "security-high-symbolic", title: tr("Set Up Recovery"),
            body: [
                Label(
                    tr(
                        "Your account has no recovery key yet. Ferry can make one: with it you verify your devices, so that they trust each other and what Ferry sends."
                    ),
                    style: "dim-label", alignment: 0.5),
                passwordBox, error, Self.centered(makeButton),
            ])

        // Not selectable: a selection would put the key into X's primary selection. Copy is
        // the one way out, when the person asks.
        keyLabel.addStyle("monospace")
        copyButton.addStyle("pill")
        doneButton.addStyle("pill")
        let show = Self.page(
            iconName: "emblem-ok-symbolic", title: tr("Save Your Recovery Key"),
            body: [
                Label(
                    tr(
                        "Write it down, or keep it in a password manager. It is shown only now: Ferry does not keep it, and without it a new device cannot be verified."
                    ),
                    style: "dim-label", alignment: 0.5),
                keyLabel, Self.centered(Box(.vertical, spacing: 12, [copyButton, doneButton])),
            ])
        stack.add(ask, name: "ask")
        stack.add(show, name: "show")
        stack.show("ask", animated: false)
        window.setContent(stack)
        window.setDefault(makeButton)

        makeButton.onClick { [weak self] in self?.make() }
        password.onActivate { [weak self] in self?.make() }
        copyButton.onClick { [weak self] in
            guard let self else { return }
            self.window.copyToClipboard(self.keyLabel.text)
            // TRANSLATORS: the Copy button's title once the recovery key is on the clipboard.
            self.copyButton.title = tr("Copied")
        }
        doneButton.onClick { [weak self] in self?.window.close() }
        window.onCloseRequest { [weak self] in
            guard let self else { return false }
            // While the service sets up, the window stays: its answer is the only copy of the key.
            if self.makeButton.isBusy { return true }
            // The key leaves the screen with the window; nothing of it stays in this process.
            self.keyLabel.text = ""
            self.onClosed()
            return false
        }
    }

    func present() { window.present(activationToken: nil) }

    private func make() {
        guard !makeButton.isBusy else { return }
        error.isVisible = false
        makeButton.isBusy = true
        [makeButton, password].forEach { $0.isSensitive = false }
        let given = passwordBox.isVisible ? password.text : nil
        service.setUpCrossSigning(password: given) { [weak self] result in
            guard let self else { return }
            self.makeButton.isBusy = false
            [self.makeButton, self.password].forEach { $0.isSensitive = true }
            switch result {
            case .success(let key):
                self.password.text = ""
                self.keyLabel.text = key
                self.stack.show("show")
                self.window.setDefault(self.doneButton)
                self.doneButton.grabFocus()
                self.service.deviceVerification { _ in }
            case .failure(let failure) where failure.ferryName == "PasswordRequired":
                self.passwordBox.isVisible = true
                self.password.grabFocus()
            case .failure(let failure):
                self.password.text = ""
                self.error.text = failure.sentence
                self.error.accessibleName = tr("Error: {message}", ["message": failure.sentence])
                self.error.isVisible = true
            }
        }
    }

    private static func page(iconName: String, title: String, body: [Widget]) -> Widget {
        let icon = Icon(name: iconName, pixelSize: 64)
        icon.addStyle("dim-label")
        let column = Box(.vertical, spacing: 12, [icon, Label(title, style: "title-1", alignment: 0.5)] + body)
        column.setMargins(top: 24, bottom: 24, start: 12, end: 12)
        return ScrolledWindow(Clamp(column, maximumWidth: 420))
    }

    private static func centered(_ widget: Widget) -> Widget {
        widget.horizontalAlignment = .center
        widget.setMargins(top: 12)
        return widget
    }
}
