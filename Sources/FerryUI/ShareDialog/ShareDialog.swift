import FerryContract
import FerryCore
import GLibAdapter
import GtkAdapter
#if canImport(Glibc)
import Glibc
#endif

/// One share's window: sign in if needed → "Share to" → message and Share. Closing it (the X,
/// Escape) cancels the share while it is still the person's to decide; after Share it closes by
/// itself once every destination has the share. Without a share id it is the sign-in window.
@GLibMain final class ShareDialog {
    private unowned let app: FerryUIApplication
    private let service: ServiceClient
    private let shareID: String?
    private let window: Window
    private let stack = Stack()
    private let banner = Banner(tr("You are offline. The share will be sent when the connection returns."))
    private let unverifiedBanner = Banner(
        tr("This device is not verified: others may see a warning on what Ferry sends."))
    private let status = StatusPage()
    private let backButton = Button(iconName: "go-previous-symbolic", title: trc("button", "Back"))
    private let nextButton = Button(tr("Next"), style: "suggested-action")
    // TRANSLATORS: the button that sends the share.
    private let shareButton = Button(trc("button", "Share"), style: "suggested-action")
    private var signInPage: SignInPage?
    private var verifyPage: VerifyPage?
    /// Signed in here, and the "Verify this device" step is not done: the share's changes are
    /// noted, the pages wait.
    private var verifying = false
    private var sharePage: SharePage?
    private let messagePage = MessagePage()
    private var tokens: [Int] = []

    private var share: ShareSnapshot?
    /// The share was waiting for a person when this dialog took it, so closing cancels it.
    private var ownsShare = false
    /// Share was pressed (or sign-in done, for the sign-in window): closing no longer cancels.
    private var handedOver = false
    private var startWithSignIn: Bool

    var onClosed: () -> Void = {}

    // The window's titles; in a context of their own, apart from the buttons with the same English.
    private static var signInTitle: String { trc("window title", "Sign In") }
    // TRANSLATORS: the title of the window that shares files, a link or a text into Matrix rooms.
    private static var shareTitle: String { trc("window title", "Share") }

    init(application: FerryUIApplication, service: ServiceClient, shareID: String?, startWithSignIn: Bool) {
        app = application
        self.service = service
        self.shareID = shareID
        self.startWithSignIn = startWithSignIn
        window = Window(
            application: application.application, title: shareID == nil ? Self.signInTitle : Self.shareTitle,
            width: 480, height: 640)
        window.headerBar.packStart(backButton)
        window.headerBar.packEnd(nextButton)
        window.headerBar.packEnd(shareButton)
        window.insertBelowHeader(banner)
        banner.isVisible = !service.account.online
        let verify = Button(tr("Verify…"))
        verify.accessibleName = tr("Verify this device")
        verify.onClick { [weak application] in application?.openVerify() }
        unverifiedBanner.addButton(verify)
        window.insertBelowHeader(unverifiedBanner)
        unverifiedBanner.isVisible = false
        stack.add(status.root, name: "status")
        stack.add(messagePage.root, name: "message")
        window.setContent(stack)
        showButtons(for: "status")

        backButton.onClick { [weak self] in self?.showSharePage() }
        nextButton.onClick { [weak self] in self?.showMessagePage() }
        shareButton.onClick { [weak self] in self?.send() }
        messagePage.retryButton.onClick { [weak self] in self?.retry() }
        window.onCloseRequest { [weak self] in self?.closeRequested() ?? false }
        window.onFirstFrame { [weak self] in
            Log.debug("first frame: \(self?.shareID ?? "sign-in") at \(SystemClock.monotonicSeconds())")
        }

        tokens.append(
            service.observeShares { [weak self] changed in
                guard let self, changed.id == self.shareID else { return }
                self.update(changed)
            })
        tokens.append(service.observeAccount { [weak self] account in self?.accountChanged(account) })

        if let shareID {
            status.show(iconName: nil, title: tr("Loading…"), busy: true)
            stack.show("status", animated: false)
            service.share(shareID) { [weak self] result in self?.loaded(result) }
        } else {
            showSignInPage()
        }
    }

    func present(activationToken: String?) { window.present(activationToken: activationToken) }

    // MARK: Pages

    private func loaded(_ result: Result<ShareSnapshot, BusError>) {
        switch result {
        case .failure(let error):
            status.show(iconName: "dialog-error-symbolic", title: tr("Cannot Open This Share"), body: error.sentence)
            stack.show("status", animated: false)
        case .success(let share):
            self.share = share
            ownsShare = share.state.awaitsPerson
            window.headerBar.setTitle(Self.shareTitle, subtitle: share.title)
            switch share.state {
            case .awaitingSignIn: showSignInPage()
            case .awaitingDestination:
                if startWithSignIn && !service.account.signedIn { showSignInPage() } else { showSharePage() }
            case .queued, .sending, .failed:
                messagePage.fill(share: share, destinations: share.destinations.map(SafeDisplay.escaped))
                messagePage.isEditable = false
                showPage("message")
                update(share)
            case .sent, .cancelled:
                status.show(
                    iconName: share.state == .sent ? "emblem-ok-symbolic" : "edit-delete-symbolic",
                    title: share.state == .sent ? tr("Already Sent") : trc("share state", "Cancelled"),
                    body: share.title)
                showPage("status")
            }
        }
    }

    private func showSignInPage() {
        if signInPage == nil {
            let reason = shareID == nil ? nil : tr("Sign in to send what you are sharing.")
            let page = SignInPage(service: service, reason: reason)
            page.onSignedIn = { [weak self] _ in self?.signedIn() }
            stack.add(page.root, name: "sign-in")
            signInPage = page
        }
        window.title = Self.signInTitle
        showPage("sign-in")
        window.setDefault(signInPage!.signInButton)
        signInPage!.focus()
    }

    private func showVerifyPage() {
        if verifyPage == nil {
            let page = VerifyPage(service: service)
            page.onDone = { [weak self] _ in self?.continueAfterSignIn() }
            stack.add(page.root, name: "verify")
            verifyPage = page
        }
        window.title = tr("Verify This Device")
        showPage("verify")
        showVerificationBanner()
        window.setDefault(verifyPage!.verifyButton)
        verifyPage!.focus()
    }

    /// Said on the share's pages when Ferry's device is not verified (not on the step that
    /// verifies it).
    private func showVerificationBanner() {
        unverifiedBanner.isVisible =
            service.account.signedIn && service.account.deviceVerification == "unverified"
            && ["destinations", "message"].contains(stack.visiblePage ?? "")
    }

    private func showSharePage() {
        if service.account.signedIn, service.account.deviceVerification.isEmpty {
            // Not known yet (the service just started): asked once; the banner follows the answer.
            service.deviceVerification { _ in }
        }
        if sharePage == nil {
            let page = SharePage(service: service)
            page.onChoiceChanged = { [weak self] in self?.choiceChanged() }
            page.onNeedsSignIn = { [weak self] in self?.showSignInPage() }
            page.search.captureKeys(from: window)
            page.suggested = share?.suggestedDestinations ?? []
            page.account = share?.account
            stack.add(page.root, name: "destinations")
            sharePage = page
            page.reload()
        }
        window.title = Self.shareTitle
        // Focus only when the page comes in: asked again while it shows (the share's own news and
        // the read after sign-in both bring it), a grab would select what the person has typed
        // into the search so far, and the next key would replace it.
        let arriving = stack.visiblePage != "destinations"
        showPage("destinations")
        choiceChanged()
        if arriving { sharePage!.search.grabFocus() }
    }

    private func showMessagePage() {
        guard let share, let sharePage, !sharePage.chosen.isEmpty else { return }
        messagePage.fill(share: share, destinations: sharePage.chosen.map { SafeDisplay.escaped($0.displayName) })
        messagePage.isEditable = true
        messagePage.showFailure(nil, canRetry: false)
        messagePage.showProgress(nil)
        showPage("message")
        messagePage.messageField.grabFocus()
    }

    private func showPage(_ name: String) {
        let subtitle = share?.title ?? ""
        switch name {
        case "sign-in": window.headerBar.setTitle(Self.signInTitle, subtitle: subtitle)
        case "verify": window.headerBar.setTitle(tr("Verify This Device"), subtitle: subtitle)
        // TRANSLATORS: the title of the page that picks where a share goes.
        case "destinations": window.headerBar.setTitle(tr("Share To"), subtitle: subtitle)
        default: window.headerBar.setTitle(Self.shareTitle, subtitle: subtitle)
        }
        stack.show(name)
        showButtons(for: name)
        showVerificationBanner()
    }

    private func showButtons(for page: String) {
        backButton.isVisible = page == "message" && ownsShare && !handedOver
        nextButton.isVisible = page == "destinations"
        shareButton.isVisible = page == "message" && ownsShare && !handedOver
        if page == "destinations" { window.setDefault(nextButton) }
        if page == "message" { window.setDefault(shareButton) }
    }

    private func choiceChanged() {
        let count = sharePage?.chosen.count ?? 0
        nextButton.isSensitive = count > 0
        nextButton.title = tr("Next")
        if count == 0 {
            nextButton.setAccessibleDescription(tr("Choose at least one destination"))
        } else {
            // TRANSLATORS: how many destinations are ticked, said by a screen reader on the Next button.
            nextButton.setAccessibleDescription(trn("{count} chosen", "{count} chosen", count))
        }
    }

    // MARK: Sending

    private func send() {
        guard let shareID, let sharePage else { return }
        let destinations = sharePage.chosen.map(\.id)
        // Each room as the account whose row was ticked (a room two accounts share is listed twice).
        let accounts = sharePage.chosen.map(\.account)
        shareButton.isBusy = true
        backButton.isSensitive = false
        messagePage.isEditable = false
        messagePage.showFailure(nil, canRetry: false)
        service.completeShare(
            shareID, destinations: destinations, message: messagePage.editedMessage,
            // With one account, CompleteShare (as an older service knows it) says all there is.
            accounts: sharePage.showsAccounts ? accounts : nil
        ) { [weak self] result in
            guard let self else { return }
            switch result {
            case .failure(let error):
                self.shareButton.isBusy = false
                self.backButton.isSensitive = true
                self.messagePage.isEditable = true
                self.messagePage.showFailure(error.sentence, canRetry: false)
            case .success:
                self.handedOver = true
                // Offline, the outbox keeps the share and sends it later: nothing to wait for here.
                if !self.service.account.online { self.dismiss(); return }
                self.messagePage.showProgress(tr("Sending…"))
                self.service.share(shareID) { [weak self] result in
                    if case .success(let share) = result { self?.update(share) }
                }
            }
        }
    }

    private func retry() {
        guard let shareID else { return }
        messagePage.retryButton.isBusy = true
        service.retry(shareID) { [weak self] result in
            guard let self else { return }
            self.messagePage.retryButton.isBusy = false
            if case .failure(let error) = result {
                self.messagePage.showFailure(error.sentence, canRetry: true)
            } else {
                self.messagePage.showFailure(nil, canRetry: false); self.messagePage.showProgress(tr("Sending…"))
            }
        }
    }

    /// A newer snapshot of this dialog's share, from ShareChanged or GetShare.
    private func update(_ changed: ShareSnapshot) {
        let previous = share
        share = changed
        if holdsPages { return }
        switch changed.state {
        case .awaitingSignIn:
            if stack.visiblePage != "sign-in" && !handedOver { showSignInPage() }
        case .awaitingDestination:
            // Signed in (here or elsewhere): the same share continues to "Share to".
            if previous?.state == .awaitingSignIn || stack.visiblePage == "sign-in" { showSharePage() }
        case .queued, .sending:
            messagePage.showFailure(nil, canRetry: false)
            messagePage.showProgress(changed.progressDescription)
            shareButton.isBusy = handedOver
        case .sent:
            dismiss()
        case .failed:
            shareButton.isBusy = false
            shareButton.isVisible = false
            backButton.isVisible = false
            messagePage.showProgress(nil)
            messagePage.showFailure(
                withRoomNames(changed.failureMessage ?? tr("The share could not be sent.")), canRetry: true)
            messagePage.retryButton.grabFocus()
        case .cancelled:
            // Cancelled elsewhere (the command line, the main window): nothing left to decide here.
            dismiss()
        }
    }

    /// The service's sentences name a room by its id; the person picked it by its name.
    private func withRoomNames(_ sentence: String) -> String {
        (sharePage?.chosen ?? []).reduce(sentence) { text, room in
            text.replacing(room.id, with: SafeDisplay.escaped(room.displayName))
        }
    }

    private func accountChanged(_ account: AccountState) {
        banner.isVisible = !account.online
        showVerificationBanner()
        if account.signedIn, stack.visiblePage == "sign-in", !holdsPages {
            if shareID == nil {
                dismiss()
            } else if let shareID {
                service.share(shareID) { [weak self] in if case .success(let s) = $0 { self?.update(s) } }
            }
        }
    }

    /// Signed in: "Verify this device" first when the owner has not verified it (skippable),
    /// then on with the share.
    private func signedIn() {
        verifying = true
        // The sign-in page stays, its button busy, while the service asks (a few seconds at most):
        // focus then moves from its field straight to the next page's.
        signInPage?.signInButton.isBusy = true
        service.deviceVerification { [weak self] state in
            guard let self, self.verifying else { return }
            self.signInPage?.signInButton.isBusy = false
            if state == "unverified" { self.showVerifyPage() } else { self.continueAfterSignIn() }
        }
    }

    /// A sign-in from this dialog is under way or its verify step is open: what the service says
    /// meanwhile (signed in, the share moved on) waits for them, so the step is not skipped.
    private var holdsPages: Bool { verifying || signInPage?.isSigningIn == true }

    private func continueAfterSignIn() {
        verifying = false
        window.title = shareID == nil ? Self.signInTitle : Self.shareTitle
        guard let shareID else {
            dismiss()
            return
        }
        // The service moves the share on by itself; its ShareChanged (or this read) brings page 1.
        service.share(shareID) { [weak self] result in
            guard let self, case .success(let share) = result else { return }
            self.update(share)
            if share.state == .awaitingDestination { self.showSharePage() }
        }
    }

    // MARK: Closing

    /// Close (the X, Escape) cancels a share that is still the person's: nothing is sent and the
    /// service removes its staged files.
    private func closeRequested() -> Bool {
        if let shareID, ownsShare, !handedOver, share?.state.isCancellable ?? false {
            app.application.hold()
            service.cancel(shareID) { [app] result in
                if case .failure(let error) = result { Log.error("ferry-ui: cancelling \(shareID): \(error)") }
                app.application.release()
            }
        }
        finish()
        return false
    }

    /// Closes without cancelling: the share is the service's now (or there is nothing to decide).
    private func dismiss() {
        handedOver = true
        finish()
        window.destroy()
    }

    private func finish() {
        tokens.forEach(service.stopObserving)
        tokens.removeAll()
        onClosed()
    }
}
