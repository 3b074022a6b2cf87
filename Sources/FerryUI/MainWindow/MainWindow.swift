import FerryContract
import FerryCore
import GLibAdapter
import GtkAdapter
#if canImport(Glibc)
import Glibc
#endif

/// The window of Ferry started from the app grid (Activate): the account, signed in or not, and
/// recent shares with their states, Retry and Cancel.
@GLibMain final class MainWindow {
    private unowned let app: FerryUIApplication
    private let service: ServiceClient
    private let window: Window
    private let accountRow = Row(title: tr("Not signed in"))
    private let accountButton = Button(trc("button", "Sign In"))
    /// Opens the account's page at its sign-in service, where the homeserver names one.
    private let manageButton = Button(tr("Manage Account…"))
    private var manageAddress: String?
    /// The account `manageAddress` was asked for.
    private var managedAccount: String?
    // TRANSLATORS: the row about Ferry's own Matrix device (whether it is verified).
    private let deviceRow = Row(title: tr("This Device"))
    private let verifyButton = Button(tr("Verify…"))
    private let setUpButton = Button(tr("Set Up…"))
    /// The other signed-in accounts (the rows above are the one signed in last), each with Sign Out.
    private let otherAccounts = ListBox()
    private let addAccountButton = Button(tr("Add Account…"))
    private let accountHeading = Label(tr("Account"), style: "heading")
    private let sharesList = ListBox()
    private let emptyNotice = Label(
        // TRANSLATORS: “Open With → Ferry” is the file manager's menu; use its words in your language.
        tr("Nothing shared yet. Share files from your file manager with “Open With → Ferry”."),
        style: "dim-label", alignment: 0.5)
    private let banner = Banner(tr("You are offline. Shares will be sent when the connection returns."))
    private var tokens: [Int] = []
    private var reloadScheduled = false
    /// The account's picture, its initials until the picture arrives; a person's outline signed out.
    private let accountAvatar = Avatar(name: "", size: 32)
    private lazy var pictures = AvatarPictures(service: service)
    /// The account whose picture the account row shows.
    private var shownAccount: String?

    var onClosed: () -> Void = {}

    init(application: FerryUIApplication, service: ServiceClient) {
        app = application
        self.service = service
        window = Window(application: application.application, title: "Ferry", width: 560, height: 620)

        accountButton.verticalAlignment = .center
        accountRow.addPrefix(accountAvatar)
        manageButton.verticalAlignment = .center
        manageButton.isVisible = false
        accountRow.addSuffix(manageButton)
        accountRow.addSuffix(accountButton)
        let accountList = ListBox()
        accountList.accessibleName = tr("Account")
        accountList.append(accountRow)
        verifyButton.verticalAlignment = .center
        verifyButton.accessibleName = tr("Verify this device")
        deviceRow.addPrefix(Icon(name: "computer-symbolic", pixelSize: 32))
        deviceRow.addSuffix(verifyButton)
        setUpButton.verticalAlignment = .center
        setUpButton.accessibleName = tr("Set up recovery")
        deviceRow.addSuffix(setUpButton)
        accountList.append(deviceRow)
        otherAccounts.accessibleName = tr("Other accounts")
        otherAccounts.isVisible = false
        addAccountButton.horizontalAlignment = .start
        addAccountButton.isVisible = false
        sharesList.accessibleName = tr("Recent shares")
        emptyNotice.setMargins(18)
        emptyNotice.isVisible = false

        let column = Box(
            .vertical, spacing: 12,
            [
                accountHeading, accountList, otherAccounts, addAccountButton,
                Label(tr("Recent Shares"), style: "heading"), sharesList, emptyNotice,
            ])
        column.setMargins(top: 18, bottom: 18, start: 12, end: 12)
        let scroller = ScrolledWindow(Clamp(column, maximumWidth: 600))
        window.insertBelowHeader(banner)
        window.setContent(scroller)

        accountButton.onClick { [weak self] in self?.accountButtonClicked() }
        manageButton.onClick { [weak self] in self?.manageAccount() }
        addAccountButton.onClick { [weak self] in self?.app.openSignIn() }
        // The device of the account shown, even when another signed in since the window drew it.
        verifyButton.onClick { [weak self] in self?.app.openVerify(account: self?.service.account.accountID) }
        setUpButton.onClick { [weak self] in self?.app.openSetUpRecovery() }
        window.onCloseRequest { [weak self] in
            guard let self else { return false }
            self.tokens.forEach(self.service.stopObserving)
            self.onClosed()
            return false
        }
        tokens.append(service.observeAccount { [weak self] account in self?.showAccount(account) })
        tokens.append(service.observeShares { [weak self] _ in self?.scheduleReload() })
        showAccount(service.account)
        service.refreshAccount { [weak self] in
            // Not known yet (the service just started): asked, and shown when it answers.
            if let self, self.service.account.signedIn, self.service.account.deviceVerification.isEmpty {
                self.service.deviceVerification { _ in }
            }
        }
        reload()
    }

    func present(activationToken: String?) { window.present(activationToken: activationToken) }

    private func showAccount(_ account: AccountState) {
        banner.isVisible = account.signedIn && !account.online
        if account.signedIn {
            accountRow.title = SafeDisplay.escaped(account.accountID)
            accountRow.subtitle = SafeDisplay.escaped(account.homeserver)
            if shownAccount != account.accountID {
                shownAccount = account.accountID
                accountAvatar.name = Self.avatarName(account.accountID)
                pictures.clear(accountAvatar)
                pictures.show(nil, as: account.accountID, on: accountAvatar)
            }
            accountButton.title = tr("Sign Out")
        } else {
            shownAccount = nil
            accountAvatar.name = ""
            pictures.clear(accountAvatar)
            accountRow.title = tr("Not signed in")
            accountRow.subtitle = tr("Sign in to share into your Matrix rooms")
            accountButton.title = trc("button", "Sign In")
        }
        // TRANSLATORS: the accessible name of the account's row; {account} is a Matrix user id or "Not signed in".
        accountRow.accessibleName = tr("Account: {account}", ["account": accountRow.title])
        showDevice(account)
        showManagement(account)
        addAccountButton.isVisible = account.signedIn
        reloadOtherAccounts()
    }

    /// "Manage Account…" where the account's homeserver names an account page (the OAuth 2.0
    /// API's `account_management_uri`): asked once per account shown, not at every change of
    /// its state (online, verification).
    private func showManagement(_ account: AccountState) {
        guard account.signedIn else {
            managedAccount = nil
            manageAddress = nil
            manageButton.isVisible = false
            return
        }
        guard managedAccount != account.accountID else { return }
        managedAccount = account.accountID
        manageButton.isVisible = false
        let shown = account.accountID
        service.loginFlows(homeserver: account.homeserver) { [weak self] result in
            guard let self, self.service.account.accountID == shown else { return }
            self.manageAddress = (try? result.get())?.accountManagement
            self.manageButton.isVisible = self.manageAddress != nil
        }
    }

    private func manageAccount() {
        guard let manageAddress else { return }
        do { try Launcher.open(uri: manageAddress) } catch {
            // No browser to open it with: said where the UI's other failures to start a program are.
            let line = Array("ferry-ui: no browser could open \(manageAddress): \(error.message)\n".utf8)
            _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
        }
    }

    private func showDevice(_ account: AccountState) {
        deviceRow.isVisible = account.signedIn
        verifyButton.isVisible = account.deviceVerification == "unverified"
        setUpButton.isVisible = account.deviceVerification == "no-identity"
        deviceRow.subtitle =
            switch account.deviceVerification {
            case "verified": tr("Verified: your other devices trust what Ferry sends")
            case "unverified": tr("Not verified: your other devices may show a warning on what Ferry sends")
            case "no-identity": tr("Not verified: your account has no recovery key yet")
            default: tr("Checking whether it is verified…")
            }
        // TRANSLATORS: the accessible name of the device's row; {verification} is one of the "Verified: …" or "Not
        // verified: …" lines.
        deviceRow.accessibleName = tr("This device: {verification}", ["verification": deviceRow.subtitle])
    }

    /// The accounts signed in besides the one shown above, asked afresh whenever the account changes.
    private func reloadOtherAccounts() {
        service.accounts { [weak self] accounts in
            guard let self else { return }
            let shown = self.service.account.accountID
            self.otherAccounts.removeAll()
            let others = accounts.filter { $0.userID != shown }
            for account in others { self.otherAccounts.append(self.row(for: account)) }
            self.otherAccounts.isVisible = !others.isEmpty
            // TRANSLATORS: the main window's heading above several signed-in accounts.
            self.accountHeading.text = others.isEmpty ? tr("Account") : tr("Accounts")
        }
    }

    /// The name an account's initials come from: the user id's local part ("@ada:example.org" → "ada"),
    /// not its sigil.
    static func avatarName(_ userID: String) -> String {
        String(userID.drop { $0 == "@" }.prefix { $0 != ":" })
    }

    private func row(for account: AccountListing) -> Row {
        let user = SafeDisplay.escaped(account.userID)
        let row = Row(title: user, subtitle: SafeDisplay.escaped(account.homeserver))
        let avatar = Avatar(name: Self.avatarName(account.userID), size: 32)
        row.addPrefix(avatar)
        pictures.show(nil, as: account.userID, on: avatar)
        let signOut = Button(tr("Sign Out"))
        // TRANSLATORS: the accessible name of another account's Sign Out button; {account} is a Matrix user id.
        signOut.accessibleName = tr("Sign out {account}", ["account": user])
        signOut.verticalAlignment = .center
        signOut.onClick { [weak self, weak signOut, weak row] in
            signOut?.isBusy = true
            self?.service.signOut(account: account.userID) { result in
                signOut?.isBusy = false
                if case .failure(let error) = result { row?.subtitle = error.sentence }
                self?.service.refreshAccount()
                self?.reloadOtherAccounts()
            }
        }
        if account.deviceVerification == "unverified" {
            let verify = Button(tr("Verify…"))
            // TRANSLATORS: the accessible name of another account's Verify button; {account} is a Matrix user id.
            verify.accessibleName = tr("Verify the device of {account}", ["account": user])
            verify.verticalAlignment = .center
            verify.onClick { [weak self] in self?.app.openVerify(account: account.userID) }
            row.addSuffix(verify)
            row.subtitle = tr(
                // TRANSLATORS: another account's second line in the main window; {homeserver} is its server's
                // address.
                "{homeserver} · device not verified", ["homeserver": SafeDisplay.escaped(account.homeserver)])
        }
        row.addSuffix(signOut)
        // TRANSLATORS: the accessible name of another account's row; {account} is a Matrix user id.
        row.accessibleName = tr("Account: {account}", ["account": user])
        return row
    }

    private func accountButtonClicked() {
        guard service.account.signedIn else { return app.openSignIn() }
        accountButton.isBusy = true
        // The account shown, even when another signed in since the window drew it.
        service.signOut(account: service.account.accountID) { [weak self] result in
            self?.accountButton.isBusy = false
            if case .failure(let error) = result { self?.accountRow.subtitle = error.sentence }
            self?.service.refreshAccount()
        }
    }

    /// ShareChanged can come in bursts while a share uploads: one reload per 200 ms at most.
    private func scheduleReload() {
        guard !reloadScheduled else { return }
        reloadScheduled = true
        MainContext.after(milliseconds: 200) { [weak self] in
            self?.reloadScheduled = false
            self?.reload()
        }
    }

    private func reload() {
        service.shares { [weak self] result in
            guard let self else { return }
            self.sharesList.removeAll()
            switch result {
            case .success(let shares):
                for share in shares.prefix(30) { self.sharesList.append(self.row(for: share)) }
                self.sharesList.isVisible = !shares.isEmpty
                self.emptyNotice.isVisible = shares.isEmpty
            case .failure(let error):
                self.sharesList.append(Row(title: tr("Cannot list shares"), subtitle: error.sentence))
            }
        }
    }

    private func row(for share: ShareSnapshot) -> Row {
        let row = Row(title: share.title, subtitle: share.stateDescription)
        let icon =
            share.files.count == 1
            ? Icon(contentType: share.files[0].contentType, pixelSize: 32)
            : Icon(
                name: share.files.isEmpty
                    ? (share.link != nil ? "web-browser-symbolic" : "text-x-generic-symbolic")
                    : "folder-documents-symbolic", pixelSize: 32)
        row.addPrefix(icon)
        let id = share.id
        if share.state == .awaitingDestination || share.state == .awaitingSignIn {
            let signIn = share.state == .awaitingSignIn
            // TRANSLATORS: a share's button that opens its dialog: to sign in first, or to choose where it goes.
            let open = Button(signIn ? tr("Sign In…") : tr("Choose…"))
            open.accessibleName =
                signIn
                // TRANSLATORS: the accessible names of that button; {share} is the share's name, "photo.png" or "3
                // files".
                ? tr("Sign in to send {share}", ["share": share.title])
                : tr("Choose where to send {share}", ["share": share.title])
            open.verticalAlignment = .center
            open.onClick { [weak self] in self?.app.openDialog(for: id) }
            row.addSuffix(open)
        }
        if share.state == .failed {
            let retry = Button(
                // TRANSLATORS: an icon button's accessible name and tooltip; {share} is the share's name, "photo.png"
                // or "3 files".
                iconName: "view-refresh-symbolic", title: tr("Retry {share}", ["share": share.title]), style: "flat")
            retry.verticalAlignment = .center
            retry.onClick { [weak self] in self?.service.retry(id) { _ in } }
            row.addSuffix(retry)
        }
        if share.state.isCancellable && share.state != .failed {
            let cancel = Button(
                // TRANSLATORS: an icon button's accessible name and tooltip; {share} is the share's name, "photo.png"
                // or "3 files".
                iconName: "process-stop-symbolic", title: tr("Cancel {share}", ["share": share.title]), style: "flat")
            cancel.verticalAlignment = .center
            cancel.onClick { [weak self] in self?.service.cancel(id) { _ in } }
            row.addSuffix(cancel)
        }
        // TRANSLATORS: the accessible name of a share's row; {share} is its name, {state} its state ("Sent", "Waiting
        // for sign-in").
        row.accessibleName = tr("{share}, {state}", ["share": share.title, "state": share.stateDescription])
        return row
    }
}
