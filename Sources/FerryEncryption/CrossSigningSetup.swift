import Crypto
import FerryCore
import FerryCrypto
import FerryMatrix

/// What setting up a cross-signing identity gives the person: the recovery key, shown once.
public struct CrossSigningSetup: Sendable {
    /// The new secret storage key as a person writes it down ("EsTc …"). Not kept anywhere.
    public let recoveryKey: String
    /// Ferry's device, signed by the new identity.
    public let verification: DeviceVerification
}

/// A set-up under way: kept in memory until it is done, so that a retry after a failure halfway
/// (a timeout, a server error, the password asked for) goes on with the same identity and key.
struct PendingSetUp: Sendable {
    let identity: NewCrossSigningIdentity
    let key: SymmetricKey
    let keyID: String
}

extension Encryption {
    /// Sets up a cross-signing identity for an account that has none, and secret storage to keep
    /// it in, and verifies Ferry's device with it. Never replaces an identity or secret storage
    /// that exists (other clients' trust and secrets hang on them), except its own half-made one.
    ///
    /// Order, so that an interruption loses nothing that was shown: the storage key's description
    /// and the secrets go up first (unused until they are the default), then the identity, then
    /// the default key. Every step may be repeated, and a retry repeats them with the same keys.
    /// (A crash of the service between the identity and the reply loses the key: the account then
    /// has an identity nobody holds, to be reset in another client. Known, and rare.)
    public func setUpCrossSigning(
        session: Session, password: String?
    ) async throws(VerificationFailure) -> CrossSigningSetup {
        try beginVerifying()
        defer { verifying = false }
        let (ours, api, data) = try await ownKeys(session)
        let user = session.userID
        let pending =
            pendingSetUps[user]
            ?? PendingSetUp(
                identity: NewCrossSigningIdentity(userID: user),
                key: SymmetricKey(size: .bits256),
                keyID: Self.newKeyID())
        do {
            try await Self.checkNothingToReplace(pending, api: api, data: data, user: user)
            pendingSetUps[user] = pending
            let storage = try SecretStorageKey(
                keyID: pending.keyID, key: pending.key,
                description: ["algorithm": .string(SecretStorageKey.algorithm)])
            try await data.put("m.secret_storage.key.\(pending.keyID)", try storage.description())
            for secret in pending.identity.secrets() {
                try await data.put(secret.name, try storage.seal(secret: secret.value, name: secret.name))
            }
            try await Self.upload(pending.identity, api: api, password: password, user: user)
            try await data.put("m.secret_storage.default_key", ["key": .string(pending.keyID)])
            logger.info("set up a cross-signing identity and secret storage for this account")

            let after = try await api.queryAnswer(users: [user])
            try await Self.sign(
                device: session, ours: ours, listedIn: after, with: try pending.identity.selfSigningKey(), api: api)
            // Ferry made this master key: it is the one trusted (`verification(of:)`).
            try store(for: session).write([CryptoStore.set(Self.trustedMaster(session), pending.identity.masterKey)])
            knownBackup = nil // a backup signed by it is trusted from now on
        } catch {
            throw Self.failure(error)
        }
        pendingSetUps[user] = nil
        let state: DeviceVerification
        do { state = try await verification(of: session) } catch { state = .unverified }
        return CrossSigningSetup(recoveryKey: RecoveryKey(key: pending.key).encoded, verification: state)
    }

    /// Refuses when the account has an identity, secret storage or stored cross-signing keys that
    /// are not this set-up's own: anything listed under master keys counts, parsable or not.
    private static func checkNothingToReplace(
        _ pending: PendingSetUp, api: DeviceKeysAPI, data: AccountData,
        user: String
    ) async throws {
        let answer = try await api.queryAnswer(users: [user])
        if let master = answer["master_keys"]?[user], master != .null,
            CrossSigning.masterKey(master, userID: user) != pending.identity.masterKey
        {
            throw VerificationFailure.alreadySetUp
        }
        if let key = try await data.get("m.secret_storage.default_key")?["key"], key != .string(pending.keyID) {
            throw VerificationFailure.secretStorageExists
        }
        for (name, _) in pending.identity.secrets() {
            if let stored = try await data.get(name), stored["encrypted"]?[pending.keyID] == nil,
                !(stored.objectValue ?? [:]).isEmpty
            {
                throw VerificationFailure.secretStorageExists
            }
        }
    }

    /// The identity's public keys up. A server that asks for user-interactive auth gets the
    /// password when it offers that, and only when no identity appeared meanwhile (the password
    /// would let the upload replace it).
    private static func upload(
        _ identity: NewCrossSigningIdentity, api: DeviceKeysAPI, password: String?,
        user: String
    ) async throws {
        let asked: MatrixError
        do throws(MatrixError) {
            try await api.uploadSigningKeys(identity.uploadBody())
            return
        } catch {
            asked = error
        }
        guard asked.status == 401, let session = asked.authSession else { throw asked }
        guard asked.authFlows.contains("m.login.password") else { throw VerificationFailure.otherAuthNeeded }
        guard let password else { throw VerificationFailure.passwordNeeded }
        let answer = try await api.queryAnswer(users: [user])
        if let master = answer["master_keys"]?[user], master != .null,
            CrossSigning.masterKey(master, userID: user) != identity.masterKey
        {
            throw VerificationFailure.alreadySetUp
        }
        var refused: MatrixError?
        do throws(MatrixError) {
            try await api.uploadSigningKeys(
                identity.uploadBody(), password: .init(userID: user, password: password, session: session))
        } catch {
            refused = error
        }
        if let refused {
            throw refused.status == 401 && refused.authSession != nil ? VerificationFailure.wrongPassword : refused
        }
    }

    /// A key id as Element makes them: 32 letters and digits.
    private static func newKeyID() -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
        return String((0..<32).map { _ in alphabet.randomElement()! })
    }
}
