import FerryCore
import GLibAdapter
import Logging

/// What a person sees of the service on their desktop: the notifications (a share finished, a
/// sign-in is needed, an Open was refused), the dialog started when a person must act, and the
/// application's actions (notification buttons, desktop-file actions). Its events may come from
/// any thread; each is handled on the main loop.
@GLibMain final class Desktop {
    private let application: Application
    private let dialogs: DialogLauncher
    private let logger: Logger
    private let notifier: FinishedNotifier
    /// A burst of shares (a script, a folder's worth of files) gets one notification, not hundreds…
    private let signInNotices = NotificationThrottle(seconds: 5)
    /// …and one sign-in window.
    private let signInDialogs = NotificationThrottle(seconds: 5)

    init(application: Application, dialogs: DialogLauncher, logger: Logger) {
        self.application = application
        self.dialogs = dialogs
        self.logger = logger
        notifier = FinishedNotifier(application: application)
    }

    /// An Open was refused: a file manager shows nothing when Open fails, so a notification says it.
    nonisolated func refused(_ error: ShareError) {
        MainContext.invoke { [self] in
            // TRANSLATORS: the title of a notification when files given to Ferry (from a file manager's "Open With")
            // were refused; the body says why.
            application.sendNotification(id: "refused", title: tr("Ferry could not share this"), body: error.message)
        }
    }

    /// A share waits for a person: the sign-in window when it only needs the account (one for a
    /// burst), the share dialog when it needs a destination.
    nonisolated func needsPerson(_ share: Share, activationToken: String?) {
        MainContext.invoke { [self] in
            if share.state == .awaitingSignIn, !share.intent.destinations.isEmpty {
                if signInDialogs.allow() { dialogs.signIn(activationToken: activationToken) }
            } else {
                dialogs.open(share: share, activationToken: activationToken)
            }
        }
    }

    /// Until the sign-in window exists, the notification is how a person learns a share waits.
    nonisolated func signInRequired(_ reason: String) {
        MainContext.invoke { [self] in
            guard signInNotices.allow() else { return }
            application.sendNotification(
                id: "sign-in", title: tr("Sign in to send your share"), body: reason,
                defaultAction: ("sign-in", nil),
                buttons: [(label: trc("button", "Sign In"), action: "sign-in", target: nil)])
        }
    }

    /// A share is sent or failed.
    nonisolated func finished(_ share: Share, destinationNames: [String]) {
        MainContext.invoke { [self] in notifier.finished(share, destinationNames: destinationNames) }
    }

    /// Activate opens the main window; `app.sign-in`, `app.shares` and `app.retry(id)` are what the
    /// notifications' buttons and the desktop file's actions call.
    func addActions(retry: @escaping @Sendable (String) -> Void) {
        application.onActivate { [self] in
            logger.info("activated")
            dialogs.mainWindow()
        }
        application.addAction("sign-in") { [self] _ in dialogs.signIn() }
        application.addAction("shares") { [self] _ in dialogs.mainWindow() }
        application.addAction("retry", parameterType: "s") { parameter in
            guard case .string(let id)? = parameter else { return }
            retry(id)
        }
    }
}
