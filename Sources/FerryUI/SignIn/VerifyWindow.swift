import FerryCore
import GLibAdapter
import GtkAdapter

/// "Verify This Device" on its own, from the main window: closes when verified or skipped.
@GLibMain final class VerifyWindow {
    private let window: Window
    private let page: VerifyPage
    var onClosed: () -> Void = {}

    /// Whose device it verifies (a user id); nil: the account signed in last.
    let account: String?

    init(application: FerryUIApplication, service: ServiceClient, account: String? = nil) {
        self.account = account
        window = Window(application: application.application, title: tr("Verify This Device"), width: 480, height: 560)
        window.headerBar.setTitle(tr("Verify This Device"))
        page = VerifyPage(service: service, account: account)
        window.setContent(page.root)
        window.setDefault(page.verifyButton)
        page.skipButton.title = tr("Cancel")
        page.onDone = { [weak self] _ in self?.window.close() }
        window.onCloseRequest { [weak self] in
            self?.onClosed()
            return false
        }
    }

    func close() { window.close() }

    func present() {
        window.present(activationToken: nil)
        page.focus()
    }
}
