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

extension Encryption {
    /// Sets up a cross-signing identity for an account that has none, and secret storage to keep
    /// it in, and verifies Ferry's device with it. Never replaces an identity or secret storage
    /// that exists (other clients' trust and secrets hang on them).
    ///
    /// Order, so that an interruption loses nothing: the storage key's description and the
    /// secrets go up first (unused until they are the default), then the identity, then the
    /// default key. A failure before the identity leaves an unused description behind; after it,
    /// the keys are in storage already.
    public func setUpCrossSigning(session: Session, password: String?) async throws(VerificationFailure) -> CrossSigningSetup {
        let ours: DeviceKeys
        do { ours = try await prepareDevice(for: session) } catch { throw .encryption(error) }
        let http = Self.http(session)
        let api = DeviceKeysAPI(http: http)
        let data = AccountData(http: http, userID: session.userID)
        let user = session.userID
        let keyBytes = SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }
        let identity = NewCrossSigningIdentity(userID: user)
        do {
            let before = try await api.queryAnswer(users: [user])
            guard CrossSigning.masterKey(before["master_keys"]?[user], userID: user) == nil else { throw VerificationFailure.alreadySetUp }
            guard try await data.get("m.secret_storage.default_key")?["key"] == nil else { throw VerificationFailure.secretStorageExists }

            let keyID = Self.newKeyID()
            let storage = try SecretStorageKey(keyID: keyID, keyBytes: keyBytes, description: ["algorithm": .string(SecretStorageKey.algorithm)])
            try await data.put("m.secret_storage.key.\(keyID)", try storage.description())
            for secret in identity.secrets() {
                try await data.put(secret.name, try storage.seal(secret: secret.value, name: secret.name))
            }
            try await Self.upload(identity, api: api, password: password)
            try await data.put("m.secret_storage.default_key", ["key": .string(keyID)])
            logger.info("set up a cross-signing identity and secret storage for this account")

            let after = try await api.queryAnswer(users: [user])
            try await Self.sign(device: session, ours: ours, listedIn: after, with: try identity.selfSigningKey(), api: api)
        } catch let failure as VerificationFailure {
            throw failure
        } catch let error as MatrixError {
            throw .server(error)
        } catch {
            throw .unreadable("\(error)")
        }
        let state: DeviceVerification
        do { state = try await verification(of: session) } catch { throw .encryption(error) }
        return CrossSigningSetup(recoveryKey: RecoveryKey(keyBytes: keyBytes).encoded, verification: state)
    }

    /// The identity's public keys up; a 401 after the password (or for want of one) says so.
    private static func upload(_ identity: NewCrossSigningIdentity, api: DeviceKeysAPI,
                               password: String?) async throws(VerificationFailure) {
        do {
            try await api.uploadSigningKeys(identity.uploadBody(), userID: identity.userID, password: password)
        } catch {
            // A 401 of user-interactive auth carries its session; a token the server no longer
            // knows is another 401, and stays a server error (the sign-in is gone).
            guard error.status == 401, error.authSession != nil else { throw .server(error) }
            throw password == nil ? .passwordNeeded : .wrongPassword
        }
    }

    /// A key id as Element makes them: 32 letters and digits.
    private static func newKeyID() -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
        return String((0..<32).map { _ in alphabet.randomElement()! })
    }
}
