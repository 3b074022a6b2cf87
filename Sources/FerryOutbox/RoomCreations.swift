import GRDB

/// Direct chats whose creation began (OutboxSchema v3): the one window in which a crash could
/// otherwise create a second room and a second invitation.
extension Outbox {
    /// Notes, durably, that the delivery is about to create its room.
    public func beginRoomCreation(shareID: String, position: Int) throws(OutboxError) {
        try writing { db in
            try db.execute(
                sql: "INSERT OR IGNORE INTO room_creation (share_id, position) VALUES (?, ?)",
                arguments: [shareID, position])
        }
    }

    /// Whether a creation began for the delivery and its room id was never recorded.
    public func roomCreationBegun(shareID: String, position: Int) throws(OutboxError) -> Bool {
        try reading { db in
            try Bool.fetchOne(
                db, sql: "SELECT EXISTS (SELECT 1 FROM room_creation WHERE share_id = ? AND position = ?)",
                arguments: [shareID, position]) ?? false
        }
    }
}
