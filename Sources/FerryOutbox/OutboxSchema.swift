import GRDB

/// The outbox's tables, as migrations: a database written by an older Ferry is upgraded in place.
///
/// Migrations that only add tables check foreign keys as they go (`.immediate`) and name the
/// referenced column: GRDB's default (checks deferred to the end of the migration) reads the whole
/// schema back and checks every table, and a first start spent a third of its time on it.
enum OutboxSchema {
    /// Every migration's identifier, in order: a database whose grdb_migrations holds exactly
    /// these needs no migrating, and opens without GRDB at a start (ColdConnection). A unit test
    /// checks this is the migrator's list; a new migration goes into both.
    static let identifiers = [
        "v1: shares and items", "v2: deliveries, their steps, the account", "v3: room creations begun",
        "v4: suggested destinations", "v5: the account a share is sent as, and under which sign-in",
        "v6: sealed encryption records", "v7: several accounts",
        "v8: encryption records per account", "v9: an account per destination",
    ]

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: shares and items", foreignKeyChecks: .immediate) { db in
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
                t.column("share_id", .text).notNull().references("share", column: "id", onDelete: .cascade)
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
        migrator.registerMigration("v2: deliveries, their steps, the account", foreignKeyChecks: .immediate) { db in
            try db.create(table: "delivery") { t in
                t.column("share_id", .text).notNull().references("share", column: "id", onDelete: .cascade)
                t.column("position", .integer).notNull()
                t.column("destination", .text).notNull()
                t.column("room_id", .text)
                t.column("state", .text).notNull()
                t.column("bytes_sent", .integer).notNull().defaults(to: 0)
                t.column("bytes_total", .integer).notNull().defaults(to: 0)
                t.column("events_sent", .integer).notNull().defaults(to: 0)
                t.column("events_total", .integer).notNull().defaults(to: 0)
                t.column("error_name", .text)
                t.column("error_message", .text)
                t.column("retry_at", .integer)
                t.column("attempts", .integer).notNull().defaults(to: 0)
                t.primaryKey(["share_id", "position"])
            }
            // One row per event to send. The transaction id is written before the request that uses
            // it, the content URI after its upload, the event id after the server accepted the event:
            // a restart resumes at the first step without an event id, with the same transaction id.
            try db.create(table: "delivery_step") { t in
                t.column("share_id", .text).notNull().references("share", column: "id", onDelete: .cascade)
                t.column("position", .integer).notNull()
                t.column("step", .integer).notNull()
                t.column("item", .integer)
                t.column("text", .text)
                t.column("transaction_id", .text).notNull()
                t.column("content_uri", .text)
                t.column("event_id", .text)
                t.primaryKey(["share_id", "position", "step"])
            }
            // The signed-in account, without its secret (that is in the Secret Service, or a 0600 file).
            try db.create(table: "account") { t in
                t.primaryKey("id", .integer)
                t.column("user_id", .text)
                t.column("homeserver", .text)
                t.column("device_id", .text)
                t.column("signed_in", .boolean).notNull().defaults(to: false)
                t.column("secret_storage", .text)
            }
        }
        // A direct chat about to be created for a delivery: written before createRoom, so that a
        // restart after the server created the room (but before its id was recorded) looks for that
        // room instead of creating and inviting a second time.
        migrator.registerMigration("v3: room creations begun", foreignKeyChecks: .immediate) { db in
            try db.create(table: "room_creation") { t in
                t.column("share_id", .text).notNull().references("share", column: "id", onDelete: .cascade)
                t.column("position", .integer).notNull()
                t.primaryKey(["share_id", "position"])
            }
        }
        // What a ferry: link named as destinations: suggestions for the dialog, never sent to as such.
        migrator.registerMigration("v4: suggested destinations") { db in
            try db.alter(table: "share") { t in
                t.add(column: "suggested_destinations", .text).notNull().defaults(to: "")
            }
        }
        // Who a share is sent as (Share.account): shares an older Ferry had queued or begun were
        // going out as the account signed in then, and keep it. And which sign-in a delivery's
        // requests went out under (Delivery.signIn): a server forgets a device's transaction ids
        // when it signs out, so a delivery resumed under a later sign-in looks in its room first.
        migrator.registerMigration("v5: the account a share is sent as, and under which sign-in") { db in
            try db.alter(table: "share") { t in
                t.add(column: "account", .text)
            }
            try db.execute(
                sql: """
                    UPDATE share SET account = (SELECT user_id FROM account WHERE id = 1)
                    WHERE state IN ('queued', 'sending')
                       OR EXISTS (SELECT 1 FROM delivery WHERE delivery.share_id = share.id)
                    """)
            try db.alter(table: "account") { t in
                t.add(column: "sign_in", .integer).notNull().defaults(to: 0)
            }
            try db.alter(table: "delivery") { t in
                t.add(column: "sign_in", .integer)
            }
        }
        // What end-to-end encryption keeps: the device's account, Olm sessions, outbound Megolm
        // sessions and encrypted events about to be sent, each sealed (FerryCrypto's StateSeal)
        // under a key that lives in the Secret Service, never here. Opaque to the outbox.
        migrator.registerMigration("v6: sealed encryption records") { db in
            try db.create(table: "crypto_record") { t in
                t.primaryKey("name", .text)
                t.column("sealed", .blob).notNull()
                t.column("updated", .integer).notNull()
            }
        }
        // Several accounts, each a row under its user id. The one account an older Ferry kept comes
        // along as it was, its sign-in number too: deliveries compare theirs with it.
        migrator.registerMigration("v7: several accounts") { db in
            try db.create(table: "signed_account") { t in
                t.primaryKey("user_id", .text)
                t.column("homeserver", .text).notNull()
                t.column("device_id", .text).notNull().defaults(to: "")
                t.column("signed_in", .boolean).notNull().defaults(to: false)
                t.column("secret_storage", .text)
                t.column("sign_in", .integer).notNull().defaults(to: 0)
            }
            try db.execute(
                sql: """
                    INSERT INTO signed_account (user_id, homeserver, device_id, signed_in, secret_storage, sign_in)
                    SELECT user_id, homeserver, coalesce(device_id, ''), signed_in, secret_storage, sign_in
                    FROM account WHERE id = 1 AND user_id IS NOT NULL AND homeserver IS NOT NULL
                    """)
            try db.drop(table: "account")
        }
        // Each account's encryption records under its user id: nothing crypto is shared between
        // accounts, and removing one deletes only its own. The records an older Ferry kept were
        // its one account's; with no account left they could never be opened (their key is
        // filed under the user), so they go.
        migrator.registerMigration("v8: encryption records per account", foreignKeyChecks: .immediate) { db in
            try db.create(table: "account_crypto_record") { t in
                t.column("owner", .text).notNull()
                t.column("name", .text).notNull()
                t.column("sealed", .blob).notNull()
                t.column("updated", .integer).notNull()
                t.primaryKey(["owner", "name"])
            }
            try db.execute(
                sql: """
                    INSERT INTO account_crypto_record (owner, name, sealed, updated)
                    SELECT owner.user_id, record.name, record.sealed, record.updated
                    FROM crypto_record AS record,
                        (SELECT user_id FROM signed_account ORDER BY sign_in DESC, user_id LIMIT 1) AS owner
                    """)
            try db.drop(table: "crypto_record")
        }
        // One share may go to the rooms of several accounts (Share.destinationAccounts): the
        // account of each destination, newline-separated like the destinations, or empty when they
        // all go out as the share's account (every share an older Ferry made).
        migrator.registerMigration("v9: an account per destination") { db in
            try db.alter(table: "share") { t in
                t.add(column: "destination_accounts", .text).notNull().defaults(to: "")
            }
        }
        return migrator
    }
}
