import FerryCore
import GRDB

/// A `share` row; converts to and from the core's `Share`.
struct ShareRow: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "share"
    enum CodingKeys: String, CodingKey {
        case id, state, action, subject, message, destinations, source, account
        case suggestedDestinations = "suggested_destinations", destinationAccounts = "destination_accounts"
        case contentType = "content_type", createdAt = "created_at", updatedAt = "updated_at"
        case errorName = "error_name", errorMessage = "error_message"
    }

    var id: String
    var state: String
    var action: String
    var contentType: String
    var subject: String?
    var message: String?
    var destinations: String
    var source: String
    var suggestedDestinations: String
    var createdAt: Int64
    var updatedAt: Int64
    var errorName: String?
    var errorMessage: String?
    var account: String?
    var destinationAccounts: String

    init(_ share: Share) {
        id = share.id
        state = share.state.rawValue
        action = share.intent.action.rawValue
        contentType = share.intent.contentType
        subject = share.intent.subject
        message = share.intent.message
        destinations = newlineSeparated(share.intent.destinations)
        source = share.intent.source.rawValue
        suggestedDestinations = newlineSeparated(share.intent.suggestedDestinations)
        createdAt = share.created
        updatedAt = share.updated
        errorName = share.failure?.name
        errorMessage = share.failure?.message
        account = share.account
        destinationAccounts = newlineSeparated(share.destinationAccounts)
    }

    /// The insert both connections run (Outbox.insert: GRDB, or the cold connection at a start),
    /// with `insertValues` in the order of its columns: one text, so the two cannot drift. Not
    /// GRDB's record insertion (`insert(_:)`): it reads the table's primary key from the schema and
    /// encodes the row through Codable the first time, instantiating generic types whose
    /// conformances the Swift runtime looks up by scanning every conformance record: a quarter of
    /// a cold start's instructions (callgrind), paid by the first share of every start.
    static let insertSQL = """
        INSERT INTO share (id, state, action, content_type, subject, message, destinations, source,
                           created_at, updated_at, error_name, error_message, suggested_destinations, account,
                           destination_accounts)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """

    var insertValues: [SQLValue] {
        [
            SQLValue(id), SQLValue(state), SQLValue(action), SQLValue(contentType), SQLValue(subject),
            SQLValue(message),
            SQLValue(destinations), SQLValue(source), SQLValue(createdAt), SQLValue(updatedAt), SQLValue(errorName),
            SQLValue(errorMessage), SQLValue(suggestedDestinations), SQLValue(account),
            SQLValue(destinationAccounts),
        ]
    }

    /// Every account the share goes out as (Share.accounts); empty for a share of nobody yet.
    var accounts: [String] {
        let perDestination = destinationAccounts.split(separator: "\n").map(String.init)
        return [account].compactMap { $0 } + perDestination.filter { $0 != account }
    }

    /// Whether the share is `user`'s, or nobody's yet (then it may become theirs).
    func mayGoOut(as user: String) -> Bool { account == nil || accounts.contains(user) }

    /// The row of one share (a cached statement: the sender reads shares often).
    static func fetch(id: String, in db: Database) throws -> ShareRow? {
        try ShareRow.fetchOne(db.cachedStatement(sql: "SELECT * FROM share WHERE id = ?"), arguments: [id])
    }

    func share(items: [ShareItem], deliveries: [Delivery] = []) -> Share {
        let intent = ShareIntent(
            items: items, subject: subject, message: message,
            destinations: destinations.split(separator: "\n").map(String.init),
            source: IntakeSource(rawValue: source) ?? .share,
            suggestedDestinations: suggestedDestinations.split(separator: "\n").map(String.init))
        let failure = errorName.map { Share.Failure(name: $0, message: errorMessage ?? "") }
        // An unknown state can only come from a newer Ferry; showing it as failed keeps it visible.
        return Share(
            id: id, intent: intent, state: ShareState(rawValue: state) ?? .failed,
            created: createdAt, updated: updatedAt, failure: failure, deliveries: deliveries, account: account,
            destinationAccounts: destinationAccounts.split(separator: "\n").map(String.init))
    }
}

/// A `share_item` row.
struct ItemRow: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "share_item"
    enum CodingKeys: String, CodingKey {
        case position, kind, name, size, uri, text
        case shareID = "share_id", contentType = "content_type"
    }

    var shareID: String
    var position: Int
    var kind: String
    var name: String
    var contentType: String
    var size: Int64
    var uri: String?
    var text: String?

    init(shareID: String, position: Int, item: ShareItem) {
        self.shareID = shareID
        self.position = position
        kind = item.kind.rawValue
        name = item.name
        contentType = item.contentType
        size = Int64(item.size)
        uri = item.uri
        text = item.text
    }

    /// The insert of an item, as ShareRow.insertSQL.
    static let insertSQL = """
        INSERT INTO share_item (share_id, position, kind, name, content_type, size, uri, text)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?)
        """

    var insertValues: [SQLValue] {
        [
            SQLValue(shareID), SQLValue(Int64(position)), SQLValue(kind), SQLValue(name), SQLValue(contentType),
            SQLValue(size), SQLValue(uri), SQLValue(text),
        ]
    }

    var item: ShareItem {
        ShareItem(
            kind: ShareItem.Kind(rawValue: kind) ?? .file, name: name, contentType: contentType,
            size: UInt64(max(0, size)), uri: uri, text: text)
    }

    // Cached statements: the sender reads a share several times per event, and building the query
    // through GRDB's query interface each time cost more than the SQL itself.
    static func items(of shareID: String, in db: Database) throws -> [ShareItem] {
        try ItemRow.fetchAll(
            db.cachedStatement(sql: "SELECT * FROM share_item WHERE share_id = ? ORDER BY position"),
            arguments: [shareID]
        ).map(\.item)
    }
}

/// `list` joined by newlines, as `joined(separator: "\n")` would. Not that: the standard library's
/// unspecialized `joined` finds its associated types at run time, the first time by scanning
/// every conformance record of the binary, on the path of a cold start's first share
/// (docs/PERFORMANCE.md).
func newlineSeparated(_ list: [String]) -> String {
    var text = ""
    for (index, line) in list.enumerated() {
        if index > 0 { text += "\n" }
        text += line
    }
    return text
}
