import FerryCore
import GLibAdapter
import GtkAdapter

/// Page 2: where the share goes, what it is, and a message to go with it. While sending it shows
/// progress; a failure shows the reason with Retry.
@GLibMain final class MessagePage {
    let root: Box
    let messageField = TextArea()
    let retryButton = Button(trc("button", "Retry"))
    private let recipients = Label("", style: "title-4")
    private let messageHeading = Label(tr("Message"), style: "heading")
    private let previewHolder = Box(.vertical)
    private let status = Label("", style: "dim-label")
    private let failure = Label("", style: "error")
    /// What the field was filled with, so an untouched field keeps the share's own message.
    private var prefill = ""

    init() {
        // TRANSLATORS: the heading above the rooms and people a share goes to.
        let toHeading = Label(trc("recipients heading", "To"), style: "heading")
        recipients.accessibleName = tr("Recipients")
        messageField.accessibleName = tr("Message")
        messageField.addStyle("message-field")
        let fieldScroller = ScrolledWindow(messageField)
        fieldScroller.growWithContent(minHeight: 72, maxHeight: 240)
        fieldScroller.addStyle("card")

        status.isVisible = false
        failure.isVisible = false
        failure.accessibleName = tr("Error")
        retryButton.isVisible = false
        retryButton.horizontalAlignment = .start
        retryButton.addStyle("pill")

        let column = Box(
            .vertical, spacing: 8,
            [
                toHeading, recipients, previewHolder, messageHeading, fieldScroller,
                status, failure, retryButton,
            ])
        column.setMargins(top: 12, bottom: 18, start: 12, end: 12)
        root = Box(.vertical)
        let scroller = ScrolledWindow(Clamp(column, maximumWidth: 600))
        scroller.expandsVertically = true
        root.append(scroller)
    }

    /// Fills the page for a share and its chosen destinations; each call replaces the preview.
    func fill(share: ShareSnapshot, destinations: [String]) {
        let names = destinations.joined(separator: ", ")
        recipients.text = names
        // TRANSLATORS: {names} are the rooms and people a share goes to, "Design Team, Book Club".
        recipients.accessibleName = tr("Recipients: {names}", ["names": names])
        previewHolder.removeAll()
        if let preview = SharePreview.make(for: share) {
            previewHolder.append(preview)
            previewHolder.setMargins(top: 8, bottom: 8)
        }
        // A text share's text is the message itself (the product design); otherwise the message.
        prefill = share.message ?? (share.files.isEmpty && share.link == nil ? share.text ?? "" : "")
        messageField.text = prefill
        // One file and its message go as one event, the message its caption (Composition).
        let captions = share.files.count == 1 && share.link == nil && share.text == nil
        // TRANSLATORS: the heading of the message field when the share is one file: the words are its caption.
        let heading = captions ? tr("Caption") : tr("Message")
        messageHeading.text = heading
        messageField.accessibleName = heading
    }

    /// The message to pass to CompleteShare: empty when untouched, which keeps the share's own.
    var editedMessage: String {
        let text = messageField.text
        return text == prefill ? "" : text
    }

    var isEditable: Bool {
        get { messageField.isSensitive }
        set { messageField.isSensitive = newValue }
    }

    func showProgress(_ text: String?) {
        status.text = text ?? ""
        status.accessibleName = text ?? ""
        status.isVisible = text != nil
    }

    func showFailure(_ text: String?, canRetry: Bool) {
        failure.text = text ?? ""
        // TRANSLATORS: the accessible name of an error shown in a window; {message} is a sentence.
        failure.accessibleName = text.map { tr("Error: {message}", ["message": $0]) } ?? tr("Error")
        failure.isVisible = text != nil
        retryButton.isVisible = text != nil && canRetry
    }
}
