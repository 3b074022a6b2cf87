import FerryCore
import GRDB

/// The sender's side of the outbox: deliveries and their steps, each change committed before
/// the request it allows (transaction ids) or right after the answer it records (event ids).
extension Outbox {
    /// Shares the sender must work on, oldest first.
    public func shares(in states: [ShareState]) throws -> [Share] {
        let ids: [String] = try database.read { db in
            try String.fetchAll(db, ShareRow.select(Column("id"))
                .filter(states.map(\.rawValue).contains(Column("state")))
                .order(Column("created_at"), Column("id")))
        }
        return try ids.compactMap { try share(id: $0) }
    }

    /// Takes a share up for sending: one delivery per destination and the same composed steps for
    /// each, with their transaction ids, committed together with the state `sending`. A share taken
    /// up before (after a restart, or back from sign-in) keeps the deliveries and steps it has.
    public func beginSending(id: String, steps: [Composition.Step], bytesTotal: UInt64, at time: Int64) throws -> Share? {
        try database.write { db in
            guard var row = try ShareRow.fetchOne(db, key: id) else { return nil }
            let existing = try DeliveryRow.filter(Column("share_id") == id).fetchCount(db)
            if existing == 0 {
                let destinations = row.destinations.split(separator: "\n").map(String.init)
                for (position, destination) in destinations.enumerated() {
                    let delivery = Delivery(destination: destination, bytesTotal: bytesTotal, eventsTotal: steps.count)
                    try DeliveryRow(shareID: id, position: position, delivery: delivery).insert(db)
                    for (index, step) in steps.enumerated() {
                        try DeliveryStep(shareID: id, position: position, step: index, composed: step).insert(db)
                    }
                }
            }
            row.state = ShareState.sending.rawValue
            row.updatedAt = time
            row.errorName = nil
            row.errorMessage = nil
            try row.update(db)
            return try row.share(items: ItemRow.items(of: id, in: db), deliveries: DeliveryRow.deliveries(of: id, in: db))
        }
    }

    public func steps(shareID: String, position: Int) throws -> [DeliveryStep] {
        try database.read { db in
            try DeliveryStep.filter(Column("share_id") == shareID && Column("position") == position)
                .order(Column("step")).fetchAll(db)
        }
    }

    /// Records an upload's content URI, so a restart sends the event without uploading again.
    public func recordUpload(_ step: DeliveryStep, contentURI: String) throws {
        try database.write { db in
            var step = step
            step.contentURI = contentURI
            try step.update(db)
        }
    }

    /// Records that the server accepted a step's event, and counts it in the delivery.
    public func recordEvent(_ step: DeliveryStep, eventID: String) throws {
        try database.write { db in
            var step = step
            step.eventID = eventID
            try step.update(db)
            try db.execute(sql: "UPDATE delivery SET events_sent = events_sent + 1 WHERE share_id = ? AND position = ?",
                           arguments: [step.shareID, step.position])
        }
    }

    /// Changes one delivery; returns it as committed.
    @discardableResult
    public func updateDelivery(shareID: String, position: Int, _ change: (inout Delivery) -> Void) throws -> Delivery? {
        try database.write { db in
            guard let row = try DeliveryRow.fetchOne(db, key: ["share_id": shareID, "position": position]) else { return nil }
            var delivery = row.delivery
            change(&delivery)
            try DeliveryRow(shareID: shareID, position: position, delivery: delivery).update(db)
            return delivery
        }
    }

    /// Moves every share in one of `states` to `target` (sign-in and sign-out move shares in bulk);
    /// returns the ids moved.
    public func move(from states: [ShareState], to target: ShareState, at time: Int64) throws -> [String] {
        try database.write { db in
            let filter = ShareRow.filter(states.map(\.rawValue).contains(Column("state")))
            let ids = try String.fetchAll(db, filter.select(Column("id")))
            try filter.updateAll(db, Column("state").set(to: target.rawValue), Column("updated_at").set(to: time))
            return ids
        }
    }

    /// Replaces a share's destinations and message (the dialog's choice) and queues it.
    public func complete(id: String, destinations: [String], message: String?, state: ShareState, at time: Int64) throws -> Share? {
        try database.write { db in
            guard var row = try ShareRow.fetchOne(db, key: id) else { return nil }
            row.destinations = destinations.joined(separator: "\n")
            row.message = message
            row.state = state.rawValue
            row.updatedAt = time
            try row.update(db)
            return try row.share(items: ItemRow.items(of: id, in: db), deliveries: DeliveryRow.deliveries(of: id, in: db))
        }
    }

    /// The destinations Ferry sent to, most recent first (for the destination list's recents).
    public func recentRooms(limit: Int) throws -> [String] {
        try database.read { db in
            try String.fetchAll(db, sql: """
                SELECT d.room_id FROM delivery d JOIN share s ON s.id = d.share_id
                WHERE d.state = 'sent' AND d.room_id IS NOT NULL
                GROUP BY d.room_id ORDER BY MAX(s.updated_at) DESC LIMIT ?
                """, arguments: [limit])
        }
    }
}

/// The signed-in account as the outbox keeps it: who and where, never the secret.
public struct StoredAccount: Equatable, Sendable {
    public var userID: String
    public var homeserver: String
    public var deviceID: String
    public var signedIn: Bool
    public var secretStorage: String?

    public init(userID: String, homeserver: String, deviceID: String, signedIn: Bool, secretStorage: String?) {
        self.userID = userID
        self.homeserver = homeserver
        self.deviceID = deviceID
        self.signedIn = signedIn
        self.secretStorage = secretStorage
    }
}

extension Outbox {
    public func account() throws -> StoredAccount? {
        try database.read { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT * FROM account WHERE id = 1"),
                  let user: String = row["user_id"], let homeserver: String = row["homeserver"] else { return nil }
            return StoredAccount(userID: user, homeserver: homeserver, deviceID: row["device_id"] ?? "",
                                 signedIn: row["signed_in"], secretStorage: row["secret_storage"])
        }
    }

    public func save(account: StoredAccount) throws {
        try database.write { db in
            try db.execute(sql: """
                INSERT INTO account (id, user_id, homeserver, device_id, signed_in, secret_storage)
                VALUES (1, ?, ?, ?, ?, ?)
                ON CONFLICT(id) DO UPDATE SET user_id = excluded.user_id, homeserver = excluded.homeserver,
                    device_id = excluded.device_id, signed_in = excluded.signed_in,
                    secret_storage = excluded.secret_storage
                """, arguments: [account.userID, account.homeserver, account.deviceID, account.signedIn,
                                 account.secretStorage])
        }
    }
}
