import GRDB

/// The outbox's tables, as migrations: a database written by an older Ferry is upgraded in place.
enum OutboxSchema {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: shares and items") { db in
            try db.create(table: "share") { t in
                t.primaryKey("id", .text)
                t.column("state", .text).notNull().indexed()
                t.column("action", .text).notNull()
                t.column("content_type", .text).notNull()
                t.column("subject", .text)
                t.column("message", .text)
                // Newline-separated: destinations are validated to hold no white space.
                t.column("destinations", .text).notNull().defaults(to: "")
                t.column("source", .text).notNull()
                t.column("created_at", .integer).notNull()
                t.column("updated_at", .integer).notNull()
                t.column("error_name", .text)
                t.column("error_message", .text)
            }
            try db.create(table: "share_item") { t in
                t.column("share_id", .text).notNull().references("share", onDelete: .cascade)
                t.column("position", .integer).notNull()
                t.column("kind", .text).notNull()
                t.column("name", .text).notNull()
                t.column("content_type", .text).notNull()
                t.column("size", .integer).notNull()
                t.column("uri", .text)
                t.column("text", .text)
                t.primaryKey(["share_id", "position"])
            }
        }
        return migrator
    }
}
