import FerryCore
import GRDB

/// The sender's side of the outbox: deliveries and their steps, each change committed before
/// the request it allows (transaction ids) or right after the answer it records (event ids).
extension Outbox {
    /// Shares the sender must work on, oldest first.
    public func shares(in states: [ShareState]) throws(OutboxError) -> [Share] {
        let ids: [String] = try reading { db in
            try String.fetchAll(
                db,
                ShareRow.select(Column("id"))
                    .filter(states.map(\.rawValue).contains(Column("state")))
                    .order(Column("created_at"), Column("id")))
        }
        var shares: [Share] = []
        for id in ids { if let share = try share(id: id) { shares.append(share) } }
        return shares
    }

    /// A share to take up for sending: its composed steps and the bytes of its files.
    public struct Takeover: Sendable {
        public var id: String
        public var steps: [Composition.Step]
        public var bytesTotal: UInt64
        public init(id: String, steps: [Composition.Step], bytesTotal: UInt64) {
            self.id = id
            self.steps = steps
            self.bytesTotal = bytesTotal
        }
    }

    /// Takes shares up for sending: one delivery per destination and the same composed steps for
    /// each, with their transaction ids, committed together with the state `sending` — all the
    /// shares in one transaction, so a queue of many is taken up at the cost of one commit. A share
    /// taken up before (after a restart, or back from sign-in) keeps the deliveries and steps it has.
    /// `user` takes the shares up; `signIns` are the sign-ins of the accounts signed in (by user
    /// id), under which each delivery begins (Share.account(at:), Delivery.signIn): a delivery of
    /// an account not signed in has none yet.
    public func beginSending(
        _ shares: [Takeover], as user: String, signIns: [String: Int64], at time: Int64
    ) throws(OutboxError) -> [Share] {
        try writing { db in
            try shares.compactMap { takeover in
                // Compare-and-set: a share cancelled (or settled) since the sender read it stays so,
                // and one that is someone else's is not taken up as this user.
                guard var row = try ShareRow.fetch(id: takeover.id, in: db),
                    row.state == ShareState.queued.rawValue || row.state == ShareState.sending.rawValue,
                    row.mayGoOut(as: user)
                else { return nil }
                row.account = row.account ?? user
                let accounts = row.destinationAccounts.split(separator: "\n").map(String.init)
                let existing =
                    try Int.fetchOne(
                        db.cachedStatement(sql: "SELECT COUNT(*) FROM delivery WHERE share_id = ?"),
                        arguments: [takeover.id]) ?? 0
                if existing == 0 {
                    let destinations = row.destinations.split(separator: "\n").map(String.init)
                    for (position, destination) in destinations.enumerated() {
                        // The first destination is the one the sender starts on.
                        let delivery = Delivery(
                            destination: destination, state: position == 0 ? .sending : .queued,
                            bytesTotal: takeover.bytesTotal, eventsTotal: takeover.steps.count,
                            signIn: signIns[accounts.indices.contains(position) ? accounts[position] : user])
                        try DeliveryRow(shareID: takeover.id, position: position, delivery: delivery).insert(db)
                        for (index, step) in takeover.steps.enumerated() {
                            try DeliveryStep(shareID: takeover.id, position: position, step: index, composed: step)
                                .insert(db)
                        }
                    }
                }
                row.state = ShareState.sending.rawValue
                row.updatedAt = time
                row.errorName = nil
                row.errorMessage = nil
                try row.update(db)
                return try row.share(
                    items: ItemRow.items(of: takeover.id, in: db),
                    deliveries: DeliveryRow.deliveries(of: takeover.id, in: db))
            }
        }
    }

    public func beginSending(
        id: String, steps: [Composition.Step], bytesTotal: UInt64, as user: String,
        signIns: [String: Int64], at time: Int64
    ) throws(OutboxError) -> Share? {
        try beginSending(
            [Takeover(id: id, steps: steps, bytesTotal: bytesTotal)], as: user, signIns: signIns, at: time
        ).first
    }

    public func steps(shareID: String, position: Int) throws(OutboxError) -> [DeliveryStep] {
        try reading { db in
            try DeliveryStep.fetchAll(
                db.cachedStatement(
                    sql: "SELECT * FROM delivery_step WHERE share_id = ? AND position = ? ORDER BY step"),
                arguments: [shareID, position])
        }
    }

    /// Records an upload's content URI for that file in every destination's steps: a file is
    /// uploaded once per share, and a restart sends the event without uploading again.
    ///
    /// Written as progress (`writeProgress`): a power cut may cost a second upload of the file, never
    /// a second message. A synced commit here would wait, on ext4, for every dirty block of the file
    /// system — a homeserver on the same disk has just written the whole file.
    /// `forEveryDelivery` false: the upload is this step's alone (an encrypted file is of use
    /// only to encrypted rooms, a plain one never to them), and replaces what the step had.
    /// `sharedWith`: the deliveries (by position) the upload also serves, nil for all of them: an
    /// upload is on one account's server, for the deliveries of that account.
    public func recordUpload(
        _ step: DeliveryStep, contentURI: String, forEveryDelivery: Bool = true, sharedWith positions: [Int]? = nil
    ) throws(OutboxError) {
        try writeProgress { db in
            if forEveryDelivery, let positions {
                for position in Set(positions + [step.position]) {
                    try db.execute(
                        sql: """
                            UPDATE delivery_step SET content_uri = ?
                            WHERE share_id = ? AND position = ? AND item = ? AND content_uri IS NULL
                            """,
                        arguments: [contentURI, step.shareID, position, step.item])
                }
            } else if forEveryDelivery {
                try db.execute(
                    sql: """
                        UPDATE delivery_step SET content_uri = ?
                        WHERE share_id = ? AND item = ? AND content_uri IS NULL
                        """,
                    arguments: [contentURI, step.shareID, step.item])
            } else {
                try db.execute(
                    sql: "UPDATE delivery_step SET content_uri = ? WHERE share_id = ? AND position = ? AND step = ?",
                    arguments: [contentURI, step.shareID, step.position, step.step])
            }
        }
    }

    /// Whether every file of the share is on the server already (its staged copies are no longer needed).
    public func allFilesUploaded(shareID: String) throws(OutboxError) -> Bool {
        try reading { db in
            try Int.fetchOne(
                db,
                sql: """
                    SELECT COUNT(*) FROM delivery_step
                    WHERE share_id = ? AND item IS NOT NULL AND content_uri IS NULL
                    """,
                arguments: [shareID]) == 0
        }
    }

    /// Records that the server accepted a step's event and counts it in the delivery; with
    /// `completesDelivery` (the last step) the delivery is sent, and when that was the share's last
    /// delivery the share is sent too, all in the same transaction. `roomID` is the room the
    /// destination was found to be, when that was not recorded yet. Returns the share.
    ///
    /// Written as progress (see `writeProgress`): should the machine lose this commit, the sender
    /// repeats the event with its committed transaction id and the server answers with the event
    /// it already has.
    @discardableResult
    public func recordEvent(
        _ step: DeliveryStep, eventID: String, roomID: String? = nil, completesDelivery: Bool = false,
        at time: Int64 = 0
    ) throws(OutboxError) -> Share? {
        try writeProgress { db in
            try db.cachedStatement(
                sql: "UPDATE delivery_step SET event_id = ? WHERE share_id = ? AND position = ? AND step = ?"
            )
            .execute(arguments: [eventID, step.shareID, step.position, step.step])
            if let roomID {
                try db.cachedStatement(
                    sql: "UPDATE delivery SET room_id = ? WHERE share_id = ? AND position = ? AND room_id IS NULL"
                )
                .execute(arguments: [roomID, step.shareID, step.position])
            }
            let sent =
                completesDelivery
                ? ", state = 'sent', bytes_sent = bytes_total, retry_at = NULL, attempts = 0,"
                    + " error_name = NULL, error_message = NULL"
                : ""
            try db.cachedStatement(
                sql: "UPDATE delivery SET events_sent = events_sent + 1\(sent) WHERE share_id = ? AND position = ?"
            )
            .execute(arguments: [step.shareID, step.position])
            if completesDelivery {
                try db.cachedStatement(
                    sql: """
                        UPDATE share SET state = 'sent', updated_at = ?, error_name = NULL, error_message = NULL
                        WHERE id = ? AND state = 'sending'
                        AND NOT EXISTS (SELECT 1 FROM delivery WHERE share_id = ? AND state != 'sent')
                        """
                ).execute(arguments: [time, step.shareID, step.shareID])
            }
            guard let row = try ShareRow.fetch(id: step.shareID, in: db) else { return nil }
            return try row.share(
                items: ItemRow.items(of: step.shareID, in: db),
                deliveries: DeliveryRow.deliveries(of: step.shareID, in: db))
        }
    }

    /// Changes one delivery; returns it as committed. `durable: false` is for progress a power
    /// cut may lose (bytes sent, see `writeProgress`): such a commit does not wait for the disk,
    /// which during a big upload is busy with the homeserver's own writes.
    @discardableResult
    public func updateDelivery(
        shareID: String, position: Int, durable: Bool = true,
        _ change: (inout Delivery) -> Void
    ) throws(OutboxError) -> Delivery? {
        func apply(_ db: Database) throws -> Delivery? {
            guard
                let row = try DeliveryRow.fetchOne(
                    db.cachedStatement(sql: "SELECT * FROM delivery WHERE share_id = ? AND position = ?"),
                    arguments: [shareID, position])
            else { return nil }
            var delivery = row.delivery
            change(&delivery)
            try DeliveryRow(shareID: shareID, position: position, delivery: delivery).update(db)
            return delivery
        }
        return durable ? try writing(apply) : try writeProgress(apply)
    }

    /// Shares queued or begun as accounts none of which is among `users` (those signed in) wait
    /// again for a sign-in (as one of them): a share is never sent as someone else. A share to the
    /// rooms of several accounts goes on while one of them is signed in; the sender sends what it
    /// can and parks it with the rest (Sender.send). Returns the ids of the shares moved.
    public func park(sharesNotOf users: Set<String>, at time: Int64) throws(OutboxError) -> [String] {
        try writing { db in try Self.park(sharesNotOf: users, at: time, in: db) }
    }

    private static func park(sharesNotOf users: Set<String>, at time: Int64, in db: Database) throws -> [String] {
        // Three columns as plain rows: the sender parks at every pass, a start's included, and
        // decoding whole records costs a cold start more than the query.
        let rows = try Row.fetchAll(
            db.cachedStatement(
                sql: """
                    SELECT id, account, destination_accounts FROM share
                    WHERE state IN ('queued', 'sending') AND account IS NOT NULL
                    """))
        var ids: [String] = []
        for row in rows {
            let account: String = row["account"]
            let perDestination: String = row["destination_accounts"]
            let accounts = [account] + perDestination.split(separator: "\n").map(String.init)
            if users.isDisjoint(with: accounts) { ids.append(row["id"]) }
        }
        guard !ids.isEmpty else { return [] }
        try ShareRow.filter(ids.contains(Column("id"))).updateAll(
            db, Column("state").set(to: ShareState.awaitingSignIn.rawValue), Column("updated_at").set(to: time))
        return ids
    }

    /// `user` is signed out (here, or by its server): its queued and begun shares wait for its next
    /// sign-in, and so do those of several accounts none of which is among `stillSignedIn`; one
    /// transaction. Returns the ids moved.
    public func parkShares(of user: String, stillSignedIn: Set<String>, at time: Int64) throws(OutboxError) -> [String]
    {
        try writing { db in
            try Self.move(from: [.queued, .sending], to: .awaitingSignIn, at: time, account: user, in: db)
                + Self.park(sharesNotOf: stillSignedIn, at: time, in: db)
        }
    }

    /// Moves every share in one of `states` to `target` (sign-in and sign-out move shares in bulk);
    /// returns the ids moved.
    /// `account`: only the shares that go out as that account alone (and those of no account: an
    /// older Ferry's, which were going out as its one account); nil: everyone's. A share to the
    /// rooms of several accounts is parked by `park(sharesNotOf:)` once none of them is signed in.
    public func move(
        from states: [ShareState], to target: ShareState, at time: Int64, account: String? = nil
    ) throws(OutboxError) -> [String] {
        try writing { db in try Self.move(from: states, to: target, at: time, account: account, in: db) }
    }

    private static func move(
        from states: [ShareState], to target: ShareState, at time: Int64, account: String?, in db: Database
    ) throws -> [String] {
        var filter = ShareRow.filter(states.map(\.rawValue).contains(Column("state")))
        if let account {
            filter = filter.filter(
                Column("account") == nil
                    || (Column("account") == account && Column("destination_accounts") == ""))
        }
        let ids = try String.fetchAll(db, filter.select(Column("id")))
        try filter.updateAll(db, Column("state").set(to: target.rawValue), Column("updated_at").set(to: time))
        return ids
    }

    /// Replaces a share's destinations and message (the dialog's choice) and queues it. `text`
    /// replaces the words of a text share (the dialog shows them in its message field). Only from
    /// awaiting-destination: nil when the share is gone or no longer waits (cancelled meanwhile).
    /// `accounts`: the account of each destination, in their order (none: nobody's yet).
    public func complete(
        id: String, destinations: [String], message: String?, text: String? = nil, state: ShareState,
        accounts: [String], at time: Int64
    ) throws(OutboxError) -> Share? {
        try writing { db in
            // Compare-and-set: a share cancelled (or completed by another client) meanwhile is not revived.
            guard var row = try ShareRow.fetchOne(db, key: id), row.state == ShareState.awaitingDestination.rawValue
            else {
                return nil
            }
            if let text {
                try db.execute(
                    sql: """
                        UPDATE share_item SET text = ?, name = ?, size = ?
                        WHERE share_id = ? AND position = 0 AND kind = 'text'
                        """,
                    arguments: [text, text, text.utf8.count, id])
            }
            row.destinations = destinations.joined(separator: "\n")
            row.message = message
            row.state = state.rawValue
            let (account, perDestination) = Share.destinationAccounts(accounts)
            row.account = account
            row.destinationAccounts = newlineSeparated(perDestination)
            row.updatedAt = time
            try row.update(db)
            return try row.share(
                items: ItemRow.items(of: id, in: db), deliveries: DeliveryRow.deliveries(of: id, in: db))
        }
    }

    /// The destinations Ferry sent to, most recent first (for the destination list's recents).
    public func recentRooms(limit: Int) throws(OutboxError) -> [String] {
        try reading { db in
            try String.fetchAll(
                db,
                sql: """
                    SELECT d.room_id FROM delivery d JOIN share s ON s.id = d.share_id
                    WHERE d.state = 'sent' AND d.room_id IS NOT NULL
                    GROUP BY d.room_id ORDER BY MAX(s.updated_at) DESC LIMIT ?
                    """, arguments: [limit])
        }
    }
}
