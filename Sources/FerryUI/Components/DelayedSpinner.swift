import GLibAdapter
import GtkAdapter

/// A spinner that appears only when a wait lasts longer than `delay`: most of Ferry's waits are a
/// D-Bus call of a few milliseconds, and a wheel flashing for one frame reads as a glitch. The
/// spinner widget itself is made the first time it shows: its image is the icon theme's
/// process-working-symbolic, an SVG, and styling a spinner (shown or not) makes GTK load librsvg,
/// code and heap that a dialog which never waits long should not carry (docs/PERFORMANCE.md).
@GLibMain final class DelayedSpinner {
    static let delay: UInt32 = 400

    /// Where the spinner goes in a layout: an empty, hidden box until a wait lasts.
    let root = Box(.horizontal)
    private let size: Int32?
    private var spinner: Spinner?
    /// Counts the waits, so that the timer of a wait that ended does not show the next one's wheel early.
    private var wait = 0

    init(size: Int32? = nil) {
        self.size = size
        root.horizontalAlignment = .center
        root.isVisible = false
    }

    /// Busy: the spinner shows after `delay` if still busy then; not busy: it hides at once.
    var isBusy = false {
        didSet {
            guard isBusy != oldValue else { return }
            wait += 1
            guard isBusy else {
                root.isVisible = false
                spinner?.isSpinning = false
                return
            }
            let current = wait
            MainContext.after(milliseconds: Self.delay) { [weak self] in
                guard let self, self.isBusy, current == self.wait else { return }
                self.show()
            }
        }
    }

    private func show() {
        if spinner == nil {
            let made = Spinner()
            if let size { made.setSizeRequest(width: size, height: size) }
            root.append(made)
            spinner = made
        }
        spinner?.isSpinning = true
        root.isVisible = true
    }
}
