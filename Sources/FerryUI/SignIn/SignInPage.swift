import FerryCore
import GLibAdapter
import GtkAdapter

/// The sign-in step: homeserver, user and password, "Sign in with browser" when the server offers
/// a sign-in in the browser (its OAuth 2.0 API or single sign-on), "Create Account" where its page
/// can open at that, errors shown in place. A server that signs people in only in the browser
/// (the OAuth 2.0 API) gets no user and password fields. Used inside a share's dialog and as its
/// own window.
@GLibMain final class SignInPage {
    let root: Box
    let homeserver = TextField(.plain, placeholder: "example.org")
    let user = TextField(.plain, placeholder: "@you:example.org")
    let password = TextField(.password, placeholder: tr("Password"))
    let signInButton = Button(trc("button", "Sign In"), style: "suggested-action")
    let browserButton = Button(tr("Sign in with browser"))
    let createAccountButton = Button(tr("Create Account"))
    /// The user and password fields, left out where the server takes no password.
    private var passwordFields: [Widget] = []
    private let error = Label("", style: "error")
    private let service: ServiceClient
    private var flowsGeneration = 0
    private var flowsPending = false

    /// A sign-in from this page waits for the service's answer.
    private(set) var isSigningIn = false

    /// Called with the new account's user id.
    var onSignedIn: (String) -> Void = { _ in }

    init(service: ServiceClient, reason: String?) {
        self.service = service
        let icon = Icon(name: "avatar-default-symbolic", pixelSize: 64)
        icon.addStyle("dim-label")
        let title = Label(tr("Sign In to Matrix"), style: "title-1", alignment: 0.5)
        let explanation = Label(
            reason ?? tr("Ferry sends what you share from your own Matrix account."),
            style: "dim-label", alignment: 0.5)
        // TRANSLATORS: the Matrix server of the person's account, "matrix.org".
        homeserver.accessibleName = tr("Homeserver")
        // TRANSLATORS: the field for the Matrix user name or id, "@you:example.org".
        user.accessibleName = tr("User")
        password.accessibleName = tr("Password")
        passwordFields = [Self.labelled(tr("User"), user), Self.labelled(tr("Password"), password)]
        let fields = Box(.vertical, spacing: 12, [Self.labelled(tr("Homeserver"), homeserver)] + passwordFields)
        error.isVisible = false
        error.accessibleName = tr("Error")
        signInButton.addStyle("pill")
        browserButton.addStyle("pill")
        browserButton.isVisible = false
        createAccountButton.addStyle("pill")
        createAccountButton.addStyle("flat")
        createAccountButton.isVisible = false
        let buttons = Box(.vertical, spacing: 12, [signInButton, browserButton, createAccountButton])
        buttons.horizontalAlignment = .center
        buttons.setMargins(top: 12)

        let column = Box(.vertical, spacing: 12, [icon, title, explanation, fields, error, buttons])
        column.setMargins(top: 24, bottom: 24, start: 12, end: 12)
        root = Box(.vertical)
        let scroller = ScrolledWindow(Clamp(column, maximumWidth: 420))
        scroller.expandsVertically = true
        root.append(scroller)

        homeserver.onChange { [weak self] in self?.homeserverChanged() }
        homeserver.onActivate { [weak self] in self?.user.grabFocus() }
        user.onActivate { [weak self] in self?.password.grabFocus() }
        password.onActivate { [weak self] in self?.signInWithPassword() }
        signInButton.onClick { [weak self] in self?.signInWithPassword() }
        browserButton.onClick { [weak self] in self?.signInWithBrowser() }
        createAccountButton.onClick { [weak self] in self?.signInWithBrowser(createAccount: true) }
        [homeserver, user, password].forEach { field in field.onChange { [weak self] in self?.clearError() } }
    }

    /// Focus goes to the first empty field.
    func focus() {
        (homeserver.text.isEmpty ? homeserver : user.text.isEmpty ? user : password).grabFocus()
    }

    private static func labelled(_ title: String, _ field: TextField) -> Widget {
        let label = Label(title, style: "heading")
        return Box(.vertical, spacing: 6, [label, field])
    }

    // MARK: Login flows

    private func homeserverChanged() {
        flowsGeneration += 1
        let current = flowsGeneration
        // Asked after a pause in typing, not for every letter.
        MainContext.after(milliseconds: 500) { [weak self] in
            guard let self, current == self.flowsGeneration else { return }
            let server = self.homeserver.text.trimmingWhitespace()
            guard !server.isEmpty else { return self.show(nil) }
            self.service.loginFlows(homeserver: server) { [weak self] result in
                guard let self, current == self.flowsGeneration else { return }
                self.show(try? result.get())
            }
        }
    }

    /// The ways `flows` offers (nil: not known, as before the server answered).
    private func show(_ flows: ServiceClient.LoginFlows?) {
        let browserOnly = flows.map { $0.oauth && !$0.password } ?? false
        browserButton.isVisible = flows?.sso ?? false
        createAccountButton.isVisible = flows?.createAccount ?? false
        signInButton.isSensitive = flows?.password ?? true
        signInButton.isVisible = !browserOnly
        passwordFields.forEach { $0.isVisible = !browserOnly }
        // Where the browser is the only way, it is the suggested one.
        if browserOnly {
            browserButton.addStyle("suggested-action")
        } else {
            browserButton.removeStyle("suggested-action")
        }
    }

    // MARK: Signing in

    private func signInWithPassword() {
        let server = homeserver.text.trimmingWhitespace()
        let name = user.text.trimmingWhitespace()
        guard !server.isEmpty else {
            return showError(tr("Enter your homeserver, for example matrix.org."), field: homeserver)
        }
        guard !name.isEmpty else { return showError(tr("Enter your user name."), field: user) }
        guard !password.text.isEmpty else { return showError(tr("Enter your password."), field: password) }
        signIn(.password(homeserver: server, user: name, password: password.text), button: signInButton)
    }

    private func signInWithBrowser(createAccount: Bool = false) {
        let server = homeserver.text.trimmingWhitespace()
        guard !server.isEmpty else {
            return showError(tr("Enter your homeserver, for example matrix.org."), field: homeserver)
        }
        signIn(
            .browser(homeserver: server, createAccount: createAccount),
            button: createAccount ? createAccountButton : browserButton)
    }

    private func signIn(_ credentials: ServiceClient.Credentials, button: Button) {
        // One sign-in at a time: a second would sign in again, as a new device.
        guard !isSigningIn else { return }
        clearError()
        button.isBusy = true
        setFieldsSensitive(false)
        isSigningIn = true
        service.signIn(credentials) { [weak self] result in
            guard let self else { return }
            self.isSigningIn = false
            button.isBusy = false
            self.setFieldsSensitive(true)
            switch result {
            case .success(let userID):
                self.password.text = ""
                self.onSignedIn(userID)
            case .failure(let error):
                let field: TextField? =
                    switch error.ferryName {
                    case "SignInFailed": self.password
                    case "HomeserverUnreachable", "UnsupportedLogin": self.homeserver
                    default: nil
                    }
                self.showError(error.sentence, field: field)
            }
        }
    }

    private func setFieldsSensitive(_ sensitive: Bool) {
        [homeserver, user, password].forEach { $0.isSensitive = sensitive }
    }

    private func showError(_ text: String, field: TextField?) {
        error.text = text
        error.accessibleName = tr("Error: {message}", ["message": text])
        error.isVisible = true
        field?.isInvalid = true
        field?.grabFocus()
    }

    private func clearError() {
        error.isVisible = false
        [homeserver, user, password].forEach { $0.isInvalid = false }
    }
}
