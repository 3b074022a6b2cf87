import FerryCore
#if canImport(Glibc)
import Glibc
#endif
import GLibAdapter
import GtkAdapter

/// The ferry-ui process: one instance per session (a unique bus name, so later launches hand over
/// their command line) with one window per share, a sign-in window and a main window.
@GLibMain public final class FerryUIApplication {
    public static let id = "io.github.ferryshare.Ferry.UI"

    let application: WindowApplication
    private(set) var service: ServiceClient?
    private var shareDialogs: [String: ShareDialog] = [:]
    private var signInWindow: ShareDialog?
    private var mainWindow: MainWindow?
    private var verifyWindow: VerifyWindow?
    private var setUpWindow: SetUpRecoveryWindow?

    public init() {
        application = WindowApplication(id: Self.id)
        application.onStartup {
            Style.load()
            Button.busyDescription = tr("Working…")
        }
        application.onLaunch { [unowned self] launch in self.handle(launch) }
    }

    public func run(arguments: [String]) -> Int32 {
        // --help and mistakes are answered here, before GTK wants a display.
        switch LaunchRequest.parse(Array(arguments.dropFirst())) {
        case .success: break
        case .failure(.help):
            print(LaunchRequest.usage)
            return 0
        case .failure(.usage(let problem)):
            Log.error("ferry-ui: \(problem)\n\(LaunchRequest.usage)")
            return 64 // EX_USAGE
        }
        Self.drawWithoutOpenGL()
        return application.run(arguments: arguments)
    }

    /// Dialogs this small gain nothing from OpenGL, and merely setting it up maps Mesa into the
    /// process (with LLVM, for software rendering): most of the dialog's memory, even with
    /// GSK_RENDERER=cairo, and part of the time to the first frame (docs/PERFORMANCE.md). Without
    /// GL, GTK draws with cairo. Whoever sets GDK_DEBUG, or asks for a GL or Vulkan renderer, keeps
    /// that choice.
    static func drawWithoutOpenGL() {
        let renderer = getenv("GSK_RENDERER").map { String(cString: $0) }
        guard getenv("GDK_DEBUG") == nil, renderer == nil || renderer == "cairo" else { return }
        setenv("GDK_DEBUG", "gl-disable", 1)
    }

    private func handle(_ launch: WindowApplication.Launch) -> Int32 {
        let request: LaunchRequest
        switch LaunchRequest.parse(launch.arguments, environment: launch.environment) {
        case .success(let parsed): request = parsed
        case .failure(.help):
            print(LaunchRequest.usage)
            return 0
        case .failure(.usage(let problem)):
            Log.error("ferry-ui: \(problem)\n\(LaunchRequest.usage)")
            return 64 // EX_USAGE
        }
        guard let service = connectService() else { return 69 } // EX_UNAVAILABLE
        Log.debug("launch: \(request.window)")
        switch request.window {
        case .share(let id):
            dialog(for: id, service: service, startWithSignIn: false).present(activationToken: request.activationToken)
        case .signIn(let shareID?):
            dialog(for: shareID, service: service, startWithSignIn: true).present(
                activationToken: request.activationToken)
        case .signIn(nil):
            if signInWindow == nil {
                let window = ShareDialog(application: self, service: service, shareID: nil, startWithSignIn: true)
                window.onClosed = { [weak self] in self?.signInWindow = nil }
                signInWindow = window
            }
            signInWindow!.present(activationToken: request.activationToken)
        case .main:
            if mainWindow == nil {
                let window = MainWindow(application: self, service: service)
                window.onClosed = { [weak self] in self?.mainWindow = nil }
                mainWindow = window
            }
            mainWindow!.present(activationToken: request.activationToken)
        }
        return 0
    }

    /// The dialog of a share: a second launch for the same share brings the same window forward;
    /// each other share gets its own.
    func dialog(for shareID: String, service: ServiceClient, startWithSignIn: Bool) -> ShareDialog {
        if let existing = shareDialogs[shareID] { return existing }
        let dialog = ShareDialog(
            application: self, service: service, shareID: shareID, startWithSignIn: startWithSignIn)
        dialog.onClosed = { [weak self] in self?.shareDialogs[shareID] = nil }
        shareDialogs[shareID] = dialog
        return dialog
    }

    /// Opens a share's dialog from inside the app (the main window's "Choose…").
    func openDialog(for shareID: String) {
        guard let service else { return }
        dialog(for: shareID, service: service, startWithSignIn: false).present(activationToken: nil)
    }

    /// Opens the sign-in window from inside the app (the main window's "Sign In").
    func openSignIn() {
        guard let service else { return }
        if signInWindow == nil {
            let window = ShareDialog(application: self, service: service, shareID: nil, startWithSignIn: true)
            window.onClosed = { [weak self] in self?.signInWindow = nil }
            signInWindow = window
        }
        signInWindow!.present(activationToken: nil)
    }

    /// Opens "Verify This Device" (the main window's "Verify…") for `account`'s device.
    func openVerify(account: String? = nil) {
        guard let service else { return }
        if verifyWindow?.account != account { verifyWindow?.close() }
        if verifyWindow == nil || verifyWindow?.account != account {
            let window = VerifyWindow(application: self, service: service, account: account)
            window.onClosed = { [weak self] in self?.verifyWindow = nil }
            verifyWindow = window
        }
        verifyWindow!.present()
    }

    /// Opens "Set Up Recovery" (the main window's "Set Up…", for an account without cross-signing).
    func openSetUpRecovery() {
        guard let service else { return }
        if setUpWindow == nil {
            let window = SetUpRecoveryWindow(application: self, service: service)
            window.onClosed = { [weak self] in self?.setUpWindow = nil }
            setUpWindow = window
        }
        setUpWindow!.present()
    }

    private func connectService() -> ServiceClient? {
        if let service { return service }
        do {
            let client = try ServiceClient()
            service = client
            client.refreshAccount()
            return client
        } catch {
            Log.error("ferry-ui: cannot reach the session bus: \(error)")
            return nil
        }
    }
}

/// Messages on standard error; FERRY_LOG=debug adds the chatty ones (the service uses the same
/// variable).
enum Log {
    static let isDebug = getenv("FERRY_LOG").map { String(cString: $0) == "debug" } ?? false

    static func debug(_ message: @autoclosure () -> String) {
        if isDebug { write("ferry-ui: " + message()) }
    }

    static func error(_ message: String) { write(message) }

    private static func write(_ line: String) {
        // File descriptor 2 directly: C's `stderr` is a global Swift 6 cannot prove safe.
        var text = line + "\n"
        text.withUTF8 { bytes in _ = Glibc.write(2, bytes.baseAddress, bytes.count) }
    }
}
