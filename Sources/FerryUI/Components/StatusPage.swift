import GLibAdapter
import GtkAdapter

/// A centred icon, title and sentence for states with nothing to do: loading, gone, already sent.
@GLibMain final class StatusPage {
    let root: Box
    private let icon: Box
    private let title = Label("", style: "title-2", alignment: 0.5)
    private let body = Label("", style: "dim-label", alignment: 0.5)
    /// The spinner shows only when a wait lasts (DelayedSpinner): "Loading…" is usually a few
    /// milliseconds, too short to see a wheel, and a spinner makes GTK load librsvg.
    private let spinner = DelayedSpinner(size: 32)

    init() {
        icon = Box(.horizontal)
        icon.horizontalAlignment = .center
        root = Box(.vertical, spacing: 12, [icon, spinner.root, title, body])
        root.verticalAlignment = .center
        root.setMargins(24)
    }

    func show(iconName: String?, title: String, body: String = "", busy: Bool = false) {
        icon.removeAll()
        if let iconName {
            let image = Icon(name: iconName, pixelSize: 64)
            image.addStyle("dim-label")
            icon.append(image)
        }
        spinner.isBusy = busy
        self.title.text = title
        self.title.accessibleName = title
        self.body.text = body
        self.body.isVisible = !body.isEmpty
    }
}
