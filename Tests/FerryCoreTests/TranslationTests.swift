import FerryCore
import XCTest

/// Placeholders are filled in one pass, and every translated string goes through the installed catalogue.
final class TranslationTests: XCTestCase {
    // MARK: Filling placeholders

    func testPlaceholdersAreFilledByName() {
        XCTAssertEqual(
            Translation.fill(
                "{path} is {size}, over the limit of {limit}.",
                ["limit": "4 GB", "path": "“a.iso”", "size": "5 GB"]),
            "“a.iso” is 5 GB, over the limit of 4 GB.")
        XCTAssertEqual(Translation.fill("{room}, {room}", ["room": "Family"]), "Family, Family")
    }

    func testAValueHoldingAPlaceholderIsNotFilledAgain() {
        // A file may be named "{count}.txt": its name is shown as it is, whatever else the sentence holds.
        XCTAssertEqual(
            Translation.fill("{path} and {count} more", ["path": "“{count}.txt”", "count": "2"]),
            "“{count}.txt” and 2 more")
        XCTAssertEqual(Translation.fill("{path} does not exist.", ["path": "“{path}”"]), "“{path}” does not exist.")
        XCTAssertEqual(Translation.fill("{a}{b}", ["a": "{", "b": "b}"]), "{b}")
        XCTAssertEqual(
            trn("{count} file in {path}", "{count} files in {path}", 2, ["path": "{count}"]), "2 files in {count}")
    }

    func testUnknownPlaceholdersStay() {
        XCTAssertEqual(Translation.fill("{known} and {unknown}", ["known": "k"]), "k and {unknown}")
        XCTAssertEqual(Translation.fill("{unknown}", [:]), "{unknown}")
        XCTAssertEqual(tr("{unknown} stays."), "{unknown} stays.")
    }

    func testBracesThatAreNotPlaceholdersStay() {
        XCTAssertEqual(Translation.fill("a { b } {} {{x}} }{", ["x": "X"]), "a { b } {} {X} }{")
        XCTAssertEqual(Translation.fill("no braces at all", ["x": "X"]), "no braces at all")
        XCTAssertEqual(Translation.fill("{x", ["x": "X"]), "{x")
        XCTAssertEqual(Translation.fill("x}", ["x": "X"]), "x}")
    }

    func testEnglishPluralsCountWithoutACatalogue() {
        XCTAssertEqual(trn("{count} file", "{count} files", 1), "1 file")
        XCTAssertEqual(trn("{count} file", "{count} files", 0), "0 files")
        XCTAssertEqual(trn("{count} file of {size}", "{count} files of {size}", 3, ["size": "2 MB"]), "3 files of 2 MB")
    }

    // MARK: The installed catalogue

    /// A catalogue from plain dictionaries: gettext's lookups without a .mo file.
    private struct TestCatalogue: Translating {
        var texts: [String: String] = [:]
        /// By singular: the forms for one and for any other count.
        var plurals: [String: [String]] = [:]
        /// By context, then message.
        var contexts: [String: [String: String]] = [:]

        func text(_ message: String) -> String { texts[message] ?? message }
        func plural(_ singular: String, _ plural: String, count: UInt64) -> String {
            guard let forms = plurals[singular] else { return count == 1 ? singular : plural }
            return count == 1 ? forms[0] : forms[1]
        }
        func text(_ message: String, context: String) -> String { contexts[context]?[message] ?? message }
        func size(_ bytes: UInt64) -> String { "\(bytes) o" }
    }

    // Every assertion that needs an installed catalogue is in this one test: the catalogue is
    // global, so a second test installing one could change what another one reads.
    func testTrTrnAndTrcGoThroughTheInstalledCatalogue() {
        XCTAssertEqual(tr("Shared"), "Shared", "no catalogue is installed in unit tests: English")
        Translation.install(
            TestCatalogue(
                texts: [
                    "Shared": "Partagé",
                    "{path} does not exist.": "{path} n'existe pas.",
                    "Share {id} is {state}; only a share that failed or is still on its way can be retried.":
                        "Le partage {id} est {state} ; seul un partage en échec ou en cours peut être relancé.",
                ],
                plurals: [
                    "{count} share sent to {rooms}.": [
                        "{count} partage envoyé à {rooms}.", "{count} partages envoyés à {rooms}.",
                    ]
                ],
                contexts: ["share state": ["sent": "envoyé"]]))
        defer { Translation.install(Translation.English()) }

        XCTAssertEqual(tr("Shared"), "Partagé")
        XCTAssertEqual(tr("It could not be delivered."), "It could not be delivered.", "not in the catalogue: English")
        XCTAssertEqual(tr("{path} does not exist.", ["path": "“{path}”"]), "“{path}” n'existe pas.")
        XCTAssertEqual(
            trn("{count} share sent to {rooms}.", "{count} shares sent to {rooms}.", 1, ["rooms": "Famille"]),
            "1 partage envoyé à Famille.")
        XCTAssertEqual(
            trn("{count} share sent to {rooms}.", "{count} shares sent to {rooms}.", 3, ["rooms": "Famille"]),
            "3 partages envoyés à Famille.")
        // The context keeps the state apart from the same English word anywhere else.
        XCTAssertEqual(trc("share state", "sent"), "envoyé")
        XCTAssertEqual(tr("sent"), "sent")
        XCTAssertEqual(trc("button", "sent"), "sent")
        XCTAssertEqual(Translation.text(dynamic: "{path} does not exist.", ["path": "“a”"]), "“a” n'existe pas.")
        XCTAssertEqual(ByteCount.format(1500), "1500 o")

        // Ferry's own sentences go through it too, with the state word translated and the raw value untouched.
        XCTAssertEqual(ShareState.sent.displayName, "envoyé")
        XCTAssertEqual(ShareState.sent.rawValue, "sent")
        XCTAssertEqual(
            ShareError.notRetryable("01k", state: .sent).message,
            "Le partage “01k” est envoyé ; seul un partage en échec ou en cours peut être relancé.")
        XCTAssertEqual(ShareError.fileNotFound("/tmp/{count}").message, "“/tmp/{count}” n'existe pas.")
        var notices = FinishedNotices()
        XCTAssertEqual(notices.finished(share(), rooms: ["Famille"], at: 0)?.title, "Partagé")
    }

    private func share() -> Share {
        let text = ShareItem(kind: .text, name: "hello", contentType: "text/plain", size: 5, text: "hello")
        let intent = ShareIntent(items: [text], subject: nil, message: nil, destinations: ["!r:s"], source: .share)
        return Share(id: "s", intent: intent, state: .sent, created: 0, updated: 0)
    }
}
