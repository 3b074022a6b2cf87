import FerryCore
import FerryCrypto
import FerryMatrix

/// The room keys of the sessions Ferry creates, put into the account's server-side key backup,
/// so that a device the person adds later reads what Ferry sent (Element restores from it).
/// Only a backup signed by the master key Ferry trusts, or by its own device, gets them.
///
/// A backup is a help for later, not part of sending: when it cannot be written (the server away,
/// the backup replaced), the event still goes, and the key goes up with the room's next event.
/// The room's record says which backup version holds its session (`backedUpTo`).
extension Encryption {
    /// How long the account's backup, as last asked, is taken as current (µs): ten minutes. A
    /// person who makes a new backup elsewhere has Ferry's sessions in it within that.
    static let keyBackupCheckInterval: Int64 = 600_000_000

    /// The account's key backup as last asked (nil inside: none, or one Ferry may not write to).
    struct KnownBackup {
        var userID: String
        var backup: KeyBackup?
        var checked: Int64
    }

    /// Puts the room's session into the backup unless it is there already. Throws only what
    /// keeping the room's record throws; the backup's own failures are logged and tried again.
    func backUp(
        _ room: inout RoomRecord, as roomName: String, roomID: String, outbound: OutboundGroupSession,
        account: OlmAccount, store: CryptoStore, session: Session, http: MatrixHTTP
    ) async throws(EncryptionFailure) {
        guard let backup = await currentBackup(session: session, account: account, store: store, http: http),
            room.backedUpTo != backup.version
        else { return }
        let exported = room.firstKey(of: outbound)
        do {
            let data = try backup.keyBackupData(
                exported: exported, senderKey: account.curve25519, senderEd25519: account.ed25519)
            try await KeyBackupAPI(http: http).put(
                data, roomID: roomID, sessionID: outbound.sessionID, version: backup.version)
        } catch let error as MatrixError {
            if error.errcode == "M_WRONG_ROOM_KEYS_VERSION" || error.status == 404 {
                // Replaced or deleted since it was asked: asked again with the next event.
                knownBackup = nil
            }
            logger.warning(
                "the room key could not be put into the key backup; tried again with the room's next event",
                metadata: ["error": "\(error)"])
            return
        } catch {
            logger.error("the room key could not be made ready for the key backup", metadata: ["error": "\(error)"])
            return
        }
        room.backedUpTo = backup.version
        // Kept from here on: a later backup gets the session from this index, not a later one.
        room.exportedKey = exported
        try keep(room, as: roomName, in: store)
        logger.info("room key put into the key backup", metadata: ["version": "\(backup.version)"])
    }

    /// The backup Ferry writes to, asked at most every ten minutes; nil when the account has none
    /// or one Ferry cannot trust, or when the server could not say (asked again next time).
    private func currentBackup(
        session: Session, account: OlmAccount, store: CryptoStore, http: MatrixHTTP
    ) async -> KeyBackup? {
        if let known = knownBackup, known.userID == session.userID,
            clock() - known.checked < Self.keyBackupCheckInterval, clock() >= known.checked
        {
            return known.backup
        }
        let listed: KeyBackupAPI.Version?
        do { listed = try await KeyBackupAPI(http: http).current() } catch {
            logger.warning("the account's key backup could not be read", metadata: ["error": "\(error)"])
            // Asked again in a minute, not before every event of a server that keeps failing.
            knownBackup = KnownBackup(
                userID: session.userID, backup: nil, checked: clock() - Self.keyBackupCheckInterval + 60_000_000)
            return nil
        }
        var backup: KeyBackup?
        if let listed {
            let trusted: String?
            do { trusted = try await currentTrustedMaster(session: session, store: store, http: http) } catch {
                logger.warning("the account's master key could not be read", metadata: ["error": "\(error)"])
                knownBackup = KnownBackup(
                    userID: session.userID, backup: nil, checked: clock() - Self.keyBackupCheckInterval + 60_000_000)
                return nil
            }
            do {
                backup = try KeyBackup(
                    version: listed.version, algorithm: listed.algorithm, authData: listed.authData,
                    userID: session.userID, trustedMaster: trusted, device: (session.deviceID, account.ed25519))
            } catch {
                logger.notice(
                    "the account's key backup is not one Ferry may write to; no room key goes into it",
                    metadata: ["version": "\(listed.version)", "why": "\(error)"])
            }
        }
        knownBackup = KnownBackup(userID: session.userID, backup: backup, checked: clock())
        return backup
    }

    /// The master key Ferry trusts, when the server still lists it as the account's: after an
    /// identity reset elsewhere, a backup signed by the old one is not the person's any more.
    private func currentTrustedMaster(
        session: Session, store: CryptoStore, http: MatrixHTTP
    ) async throws -> String? {
        guard let trusted = try store.load(Self.trustedMaster(session), as: String.self) else { return nil }
        let answer = try await DeviceKeysAPI(http: http).queryAnswer(users: [session.userID])
        let listed = CrossSigning.masterKey(answer["master_keys"]?[session.userID], userID: session.userID)
        guard listed == trusted else {
            logger.warning("the account's master key is not the one Ferry trusts; no backup is trusted by it")
            return nil
        }
        return trusted
    }
}
