import FerryCore
import GtkAdapter
#if canImport(Glibc)
import Glibc
#endif

/// What is being shared, as page 2 shows it: a thumbnail for an image, thumbnails for several
/// images, name, size and icon for other files, the link for a link.
///
/// Thumbnails come from the item's original file ("uri"), read only when it is a local file this
/// user can read: the staged copy is the service's and is not reachable over D-Bus. Each preview
/// is built from its own share's snapshot, so a dialog never shows another share's file.
enum SharePreview {
    static let thumbnailSize: Int32 = 240
    static let smallThumbnailSize: Int32 = 48

    static func make(for share: ShareSnapshot) -> Widget? {
        let files = share.files
        if files.count == 1 { return single(files[0]) }
        if files.count > 1 { return several(files) }
        if let link = share.link {
            let box = Box(.horizontal, spacing: 12)
            box.append(Icon(name: "web-browser-symbolic", pixelSize: 24))
            let label = Label(SafeDisplay.escaped(link))
            label.isSelectable = true
            label.expandsHorizontally = true
            // TRANSLATORS: the accessible name of a shared link; {link} is the address.
            label.accessibleName = tr("Link {link}", ["link": SafeDisplay.escaped(link)])
            box.append(label)
            return card(box, name: tr("Preview of the link"))
        }
        return nil // text: the message field holds it
    }

    private static func single(_ file: ShareItem) -> Widget {
        let name = SafeDisplay.escaped(file.name)
        if isImage(file), let thumbnail = localPath(file).flatMap({ Thumbnail(path: $0, size: thumbnailSize) }) {
            // TRANSLATORS: the accessible name of a file's picture or card; {name} is the file's name.
            thumbnail.accessibleName = tr("Preview of {name}", ["name": name])
            // In a row of its own, the picture is asked its height for its own width, not the card's.
            let centred = Box(.horizontal, [thumbnail])
            centred.horizontalAlignment = .center
            let box = Box(.vertical, spacing: 8, [centred, caption(file)])
            return card(box, name: tr("Preview of {name}", ["name": name]))
        }
        let box = Box(.horizontal, spacing: 12)
        box.append(Icon(contentType: file.contentType, pixelSize: 48))
        let details = caption(file)
        details.expandsHorizontally = true
        box.append(details)
        return card(box, name: tr("Preview of {name}", ["name": name]))
    }

    /// Several images: a row of thumbnails; otherwise (or as well) a list of names and sizes.
    private static func several(_ files: [ShareItem]) -> Widget {
        let list = ListBox()
        list.accessibleName = tr("Files to share")
        for file in files.prefix(50) {
            let row = Row(title: SafeDisplay.escaped(file.name), subtitle: ByteCount.format(file.size))
            if isImage(file), let thumbnail = localPath(file).flatMap({ Thumbnail(path: $0, size: smallThumbnailSize) })
            {
                thumbnail.setSizeRequest(width: smallThumbnailSize, height: smallThumbnailSize)
                row.addPrefix(thumbnail)
            } else {
                row.addPrefix(Icon(contentType: file.contentType, pixelSize: 32))
            }
            list.append(row)
        }
        if files.count > 50 {
            // TRANSLATORS: the last line of a list that shows the first 50 files.
            list.append(Row(title: trn("and {count} more file", "and {count} more files", files.count - 50)))
        }
        let total = files.reduce(UInt64(0)) { $0 + $1.size }
        let heading = Label(
            // TRANSLATORS: the heading of several files' preview; {size} is their size together, "3.2 MB".
            trn("{count} file, {size}", "{count} files, {size}", files.count, ["size": ByteCount.format(total)]),
            style: "heading")
        let scroller = ScrolledWindow(list)
        scroller.growWithContent(minHeight: 60, maxHeight: 260)
        let box = Box(.vertical, spacing: 8, [heading, scroller])
        box.accessibleName = trn("Preview of {count} file", "Preview of {count} files", files.count)
        return box
    }

    private static func caption(_ file: ShareItem) -> Widget {
        let name = Label(SafeDisplay.escaped(file.name), style: "heading")
        name.ellipsizeEnd(maxLines: 2)
        let size = Label(ByteCount.format(file.size) + " · " + file.contentType, style: "dim-label")
        return Box(.vertical, spacing: 2, [name, size])
    }

    private static func card(_ content: Widget, name: String) -> Widget {
        content.setMargins(12)
        let box = Box(.vertical, [content])
        box.addStyle("card")
        box.accessibleName = name
        return box
    }

    private static func isImage(_ file: ShareItem) -> Bool { file.contentType.hasPrefix("image/") }

    /// The original file's path when it is a readable local file; nil for sftp:, smb:, and gone files.
    static func localPath(_ file: ShareItem) -> String? {
        guard let uri = file.uri, uri.hasPrefix("file://") else { return nil }
        var rest = uri.dropFirst("file://".count)
        if rest.hasPrefix("localhost/") { rest = rest.dropFirst("localhost".count) }
        guard rest.hasPrefix("/"), let path = percentDecoded(String(rest)) else { return nil }
        return access(path, R_OK) == 0 ? path : nil
    }

    static func percentDecoded(_ text: String) -> String? {
        var bytes: [UInt8] = []
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%") {
                guard let high = iterator.next(), let low = iterator.next(),
                    let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)
                else { return nil }
                bytes.append(value)
            } else {
                bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }
}
