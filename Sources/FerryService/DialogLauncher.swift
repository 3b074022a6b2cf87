import FerryCore
import GLibAdapter
import Logging

/// Starts `ferry-ui` when a person must act: choose where a share goes, or sign in. The dialog is a
/// client of Share1 like any other; the service never links GTK (docs/ARCHITECTURE.md, "Rules that hold everywhere").
///
/// Without a display (a server, a test session, a D-Bus activation environment that has none) the
/// share simply waits in its state: a notification and SignInRequired say so, and the command line
/// can complete it.
struct DialogLauncher: Sendable {
    let executable: String?
    let environment: [String: String]
    let logger: Logger

    init(environment: [String: String], logger: Logger) {
        self.environment = environment
        self.logger = logger
        executable = InstalledProgram.path("ferry-ui")
    }

    var hasDisplay: Bool { environment["DISPLAY"] != nil || environment["WAYLAND_DISPLAY"] != nil }

    func open(share: Share, activationToken: String?) {
        launch(["--share", share.id], activationToken: activationToken)
    }

    func signIn(activationToken: String? = nil) { launch(["--sign-in"], activationToken: activationToken) }

    func mainWindow(activationToken: String? = nil) { launch([], activationToken: activationToken) }

    private func launch(_ arguments: [String], activationToken: String?) {
        guard let executable, hasDisplay else {
            logger.debug("no dialog: \(executable == nil ? "ferry-ui is not installed" : "no display")")
            return
        }
        var environment = self.environment
        // The token lets the compositor give the new window focus (xdg-activation, startup-notification).
        if let activationToken {
            environment["XDG_ACTIVATION_TOKEN"] = activationToken
            environment["DESKTOP_STARTUP_ID"] = activationToken
        }
        do {
            try Spawn.detached([executable] + arguments, environment: environment)
        } catch {
            logger.warning("cannot start the share dialog: \(error.message)")
        }
    }
}
