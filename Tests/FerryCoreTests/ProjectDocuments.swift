import Foundation

/// The documents Ferry's behaviour is promised in, read from the checkout so tests and
/// documentation cannot drift apart.
enum ProjectDocuments {
    /// The repository root: this file is Tests/FerryCoreTests/ProjectDocuments.swift.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static func text(_ relativePath: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(relativePath), encoding: .utf8)
    }

    /// The lines between the first line containing `start` and the next containing `end`.
    static func lines(of text: String, from start: String, to end: String) -> [Substring] {
        let all = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard let first = all.firstIndex(where: { $0.contains(start) }),
            let last = all[first...].firstIndex(where: { $0.contains(end) })
        else { return [] }
        return Array(all[first..<last])
    }
}

/// data/dbus/io.github.ferryshare.Ferry.Share1.xml: the interface's own comment lists.
enum InterfaceDocument {
    static func text() throws -> String { try ProjectDocuments.text("data/dbus/io.github.ferryshare.Ferry.Share1.xml") }

    /// The error names in the "Errors." list: four spaces, a capitalised name, then its description.
    static func errorNames() throws -> Set<String> {
        let lines = ProjectDocuments.lines(of: try text(), from: "Errors.", to: "Unknown keys")
        return Set(
            lines.compactMap { line in firstWord(of: line, indent: 4).flatMap { $0.first!.isUppercase ? $0 : nil } })
    }

    /// The state names in the list that follows "moves through these states".
    static func stateNames() throws -> Set<String> {
        let lines = ProjectDocuments.lines(of: try text(), from: "moves through these states", to: "Errors.")
        return Set(
            lines.compactMap { line in firstWord(of: line, indent: 4).flatMap { $0.first!.isLowercase ? $0 : nil } })
    }

    /// The word that starts at exactly `indent` spaces, if the line has one there.
    private static func firstWord(of line: Substring, indent: Int) -> String? {
        let spaces = line.prefix { $0 == " " }
        guard spaces.count == indent else { return nil }
        let word = line.dropFirst(indent).prefix { !$0.isWhitespace }
        return word.isEmpty ? nil : String(word)
    }
}

/// docs/CONTRACT.md: the exit code table of the command line.
enum ContractDocument {
    /// Ferry error short names by the exit code the contract gives them ("| 65 | bad input | A, B, … |").
    static func exitCodesByErrorName() throws -> [String: Int32] {
        var codes: [String: Int32] = [:]
        for line in try ProjectDocuments.text("docs/CONTRACT.md").split(separator: "\n") {
            let cells = line.split(separator: "|", omittingEmptySubsequences: false)
                .map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 4, let code = Int32(cells[1]) else { continue }
            let names = cells[3].split(whereSeparator: { $0 == "," || $0 == ";" })
                .map { $0.trimmingCharacters(in: .whitespaces) }
                .filter { !$0.isEmpty && $0.allSatisfy { $0.isLetter } && $0.first!.isUppercase }
            for name in names { codes[name] = code }
        }
        return codes
    }
}
