import Crypto
import FerryCore
import FerryCrypto
import FerryMatrix

/// Whether the account's owner vouches for Ferry's device: its keys signed by the account's
/// self-signing key (cross-signing). Clients show messages from an unverified device with a
/// warning, or not at all (MSC4153).
public enum DeviceVerification: String, Sendable {
    /// Signed by the self-signing key, which the master key signed.
    case verified
    /// The account has a cross-signing identity, and this device is not signed by it.
    case unverified
    /// The account has no cross-signing identity yet: nothing can vouch for any device.
    case noIdentity = "no-identity"
}

/// What the person gives to open the account's secret storage.
public enum VerificationSecret: Sendable {
    /// The recovery key ("EsTc …"), as typed or pasted.
    case recoveryKey(String)
    /// The passphrase the recovery key was made from.
    case passphrase(String)

    /// Text shaped like a recovery key from a field for either: the key it spells; when it spells
    /// none (a typo), the passphrase it may be instead; when it is neither, the key's problem.
    case keyShaped(String)

    /// What a person typed into one field for either (as Element asks: "Security Key or Phrase"):
    /// a recovery key when it looks like one ("Es", 40 to 60 letters and digits), otherwise a
    /// passphrase.
    public static func either(_ text: String) -> VerificationSecret {
        let compact = text.filter { !$0.isWhitespace }
        let base58 = compact.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) }
        return compact.hasPrefix("Es") && base58 && (40...60).contains(compact.count)
            ? .keyShaped(text) : .passphrase(text)
    }
}

/// Why Ferry's device could not be verified. None of them carries the secret.
public enum VerificationFailure: Error, Sendable {
    /// The text is not a recovery key (a typo the check digit caught, a wrong length).
    case invalidRecoveryKey(RecoveryKey.Problem)
    /// The key or passphrase does not open this account's secret storage.
    case wrongKey(passphrase: Bool)
    /// A passphrase was given, but the storage's key was not made from one.
    case noPassphrase
    /// The account has no cross-signing identity.
    case noCrossSigning
    /// The account has no secret storage, or its self-signing key is not in it.
    case notInSecretStorage
    /// The stored self-signing key is not the one the account publishes (reset elsewhere since).
    case staleSecret
    /// The server lists another master key than the one whose private key is in secret storage:
    /// a server's own, or an identity reset elsewhere without storing its keys.
    case masterKeyMismatch
    /// Secret storage by an algorithm Ferry does not read, or in a shape it does not know.
    case unreadable(String)
    /// The device's own keys are not (yet) on the server.
    case encryption(EncryptionFailure)
    /// The homeserver failed a request, or refused the signature.
    case server(MatrixError)
    // Setting up a cross-signing identity.
    /// The account has a cross-signing identity already: it is never replaced.
    case alreadySetUp
    /// The account has secret storage already (other secrets may be in it): it is never replaced.
    case secretStorageExists
    /// The homeserver asks for the password, and none was given.
    case passwordNeeded
    /// The homeserver asks for another confirmation than a password (single sign-on, a web page).
    case otherAuthNeeded
    /// Another verification or set-up of this device is running.
    case busy
    /// The homeserver refused the password.
    case wrongPassword
    // Emoji verification.
    /// The account has no other device with keys to verify with.
    case noOtherDevice
    /// The device named is not one of the account's (or its keys do not check out).
    case unknownDevice
    /// No emoji verification with this id is running.
    case noSuchVerification
    /// The emoji are not there to compare (yet, or any more).
    case notComparing
}

extension Encryption {
    /// Whether the server shows Ferry's device as verified by its owner, under the master key
    /// Ferry trusts for the account where it trusts one (`trusted-master:<user>`: proven by secret
    /// storage, or made by Ferry's set-up): another master key listed makes it unverified.
    public func verification(of session: Session) async throws(EncryptionFailure) -> DeviceVerification {
        let answer: JSONValue
        do {
            answer = try await DeviceKeysAPI(http: http(session)).queryAnswer(users: [session.userID])
        } catch {
            throw .server(error)
        }
        let verification = Self.verification(in: answer, session: session)
        guard verification == .verified,
            let trusted = try store(for: session).load(Self.trustedMaster(session), as: String.self),
            trusted != CrossSigning.masterKey(answer["master_keys"]?[session.userID], userID: session.userID)
        else { return verification }
        logger.warning("the homeserver lists another master key for this account than the one Ferry trusts")
        return .unverified
    }

    /// The record of the account's master key Ferry trusts. Not the `master:<user>` pin of room
    /// keys, which is whatever was seen first: this one only a person's act writes.
    static func trustedMaster(_ session: Session) -> String { "trusted-master:\(session.userID)" }

    /// An emoji verification with another of the account's devices vouches for that device, not
    /// for a master key (the SAS covers none here): from then on the master key the server lists
    /// is taken, as before any verification, rather than one trusted earlier (an identity reset
    /// elsewhere since is why a person verifies again).
    public func forgetTrustedMaster(of session: Session) throws(EncryptionFailure) {
        try store(for: session).write([CryptoStore.delete(Self.trustedMaster(session))])
        knownBackup = nil
    }

    /// The public master key whose private key secret storage holds, or nil when it holds none.
    static func storedMasterKey(
        _ data: AccountData, storageKey: SecretStorageKey, passphrase: Bool
    ) async throws -> String? {
        guard let stored = try await data.get("m.cross_signing.master") else { return nil }
        let seed: String
        do { seed = try storageKey.open("m.cross_signing.master", from: stored) } catch {
            throw Self.failure(error, passphrase: passphrase)
        }
        guard let key = CrossSigning.publicKey(ofStoredSeed: seed) else {
            // TRANSLATORS: completes "Ferry cannot read the account's secret storage ({what})".
            throw VerificationFailure.unreadable(tr("the stored master key"))
        }
        return key
    }

    static func verification(in answer: JSONValue, session: Session) -> DeviceVerification {
        let master = answer["master_keys"]?[session.userID]
        guard CrossSigning.masterKey(master, userID: session.userID) != nil else { return .noIdentity }
        guard let keys = answer["device_keys"]?[session.userID]?[session.deviceID],
            let device = try? DeviceIdentity(verifying: keys, userID: session.userID, deviceID: session.deviceID)
        else {
            return .unverified
        }
        return CrossSigning.isVerifiedByOwner(
            keys, of: device, masterKey: master,
            selfSigningKey: answer["self_signing_keys"]?[session.userID]) ? .verified : .unverified
    }

    /// Verifies Ferry's device with the account's recovery key or passphrase: the self-signing
    /// key is read from secret storage, signs this device's keys, and the signature is uploaded.
    /// The key, the passphrase and the self-signing key are used here and dropped: none is kept
    /// or logged.
    public func verifyDevice(
        session: Session, with secret: VerificationSecret
    ) async throws(VerificationFailure) -> DeviceVerification {
        try beginVerifying()
        defer { verifying = false }
        var recoveryKey: RecoveryKey?
        var keyProblem: RecoveryKey.Problem?
        switch secret {
        case .recoveryKey(let text):
            do { recoveryKey = try RecoveryKey(decoding: text) } catch { throw .invalidRecoveryKey(error) }
        case .keyShaped(let text):
            do { recoveryKey = try RecoveryKey(decoding: text) } catch { keyProblem = error }
        case .passphrase: break
        }
        let (ours, api, data) = try await ownKeys(session)
        let user = session.userID
        do {
            let answer = try await api.queryAnswer(users: [user])
            guard CrossSigning.masterKey(answer["master_keys"]?[user], userID: user) != nil else {
                throw VerificationFailure.noCrossSigning
            }
            guard let keyID = try await data.get("m.secret_storage.default_key")?["key"]?.stringValue,
                let description = try await data.get("m.secret_storage.key.\(keyID)")
            else {
                throw VerificationFailure.notInSecretStorage
            }
            let storageKey: SecretStorageKey
            do {
                storageKey = try Self.storageKey(
                    keyID: keyID, description: description, recoveryKey: recoveryKey, secret: secret)
            } catch {
                // Key-shaped text that is not a key and not the passphrase either: the typo is
                // what the person should hear about. (storageKey throws only VerificationFailure.)
                if let keyProblem { throw VerificationFailure.invalidRecoveryKey(keyProblem) }
                throw error
            }
            // The master key the server lists must be the one in secret storage, where it is kept
            // (Element keeps it there): a server cannot vouch for Ferry with a master key of its own.
            let master = try await Self.storedMasterKey(data, storageKey: storageKey, passphrase: recoveryKey == nil)
            if let master, master != CrossSigning.masterKey(answer["master_keys"]?[user], userID: user) {
                throw VerificationFailure.masterKeyMismatch
            }
            guard let stored = try await data.get("m.cross_signing.self_signing") else {
                throw VerificationFailure.notInSecretStorage
            }
            let selfSigning: SelfSigningKey
            do {
                selfSigning = try SelfSigningKey(
                    secret: try storageKey.open("m.cross_signing.self_signing", from: stored))
            } catch let problem as SecretStorageKey.Problem {
                throw Self.failure(problem, passphrase: recoveryKey == nil)
            } catch {
                // TRANSLATORS: completes "Ferry cannot read the account's secret storage ({what})".
                throw VerificationFailure.unreadable(tr("the stored self-signing key"))
            }
            guard
                selfSigning.isPublished(
                    answer["self_signing_keys"]?[user], masterKey: answer["master_keys"]?[user], userID: user)
            else {
                throw VerificationFailure.staleSecret
            }
            try await Self.sign(device: session, ours: ours, listedIn: answer, with: selfSigning, api: api)
            // The master key proven by secret storage is the one Ferry trusts from now on
            // (`verification(of:)`), whatever the server lists later.
            // Without a master key in secret storage, the person vouched under the listed one:
            // a key trusted before (an identity reset since) no longer counts.
            try store(for: session).write([
                master.map { CryptoStore.set(Self.trustedMaster(session), $0) }
                    ?? CryptoStore.delete(Self.trustedMaster(session))
            ])
            // The backup is judged again under the master key trusted now.
            knownBackup = nil
        } catch {
            throw Self.failure(error)
        }
        logger.info(
            "this device is verified with the account's secret storage", metadata: ["device": "\(session.deviceID)"])
        do { return try await verification(of: session) } catch { throw .encryption(error) }
    }

    /// This device's keys (made and uploaded first if they are not yet), and the account's key
    /// and account data endpoints.
    func ownKeys(_ session: Session) async throws(VerificationFailure) -> (DeviceKeys, DeviceKeysAPI, AccountData) {
        let ours: DeviceKeys
        do { ours = try await prepareDevice(for: session) } catch { throw .encryption(error) }
        let http = http(session)
        return (ours, DeviceKeysAPI(http: http), AccountData(http: http, userID: session.userID))
    }

    /// Any error of a verification step as a VerificationFailure.
    static func failure(_ error: any Error) -> VerificationFailure {
        switch error {
        case let failure as VerificationFailure: return failure
        case let error as MatrixError: return .server(error)
        case let error as EncryptionFailure: return .encryption(error)
        default: return .unreadable("\(error)")
        }
    }

    func beginVerifying() throws(VerificationFailure) {
        guard !verifying else { throw .busy }
        verifying = true
    }

    /// Signs this device's keys with the self-signing key and uploads the signature. Only the
    /// keys the server lists for this device id that are this device's very keys (and signed by
    /// it) are signed: never a key a server put in their place.
    static func sign(
        device session: Session, ours: DeviceKeys, listedIn answer: JSONValue, with selfSigning: SelfSigningKey,
        api: DeviceKeysAPI
    ) async throws {
        let user = session.userID
        guard let listed = answer["device_keys"]?[user]?[session.deviceID],
            let device = try? DeviceIdentity(verifying: listed, userID: user, deviceID: session.deviceID),
            device.ed25519 == ours.ed25519, device.curve25519 == ours.curve25519, let object = listed.objectValue
        else {
            throw VerificationFailure.encryption(
                // TRANSLATORS: completes "This device cannot be verified this way: the homeserver refused: {reason}."
                .crypto(tr("this device's keys are not on the server as Ferry made them")))
        }
        let failures = try await api.uploadSignatures([
            user: [session.deviceID: .object(selfSigning.signed(object, userID: user))]
        ])
        if let refused = failures.objectValue, !refused.isEmpty {
            throw VerificationFailure.server(
                // TRANSLATORS: completes "This device cannot be verified this way: the homeserver refused: {reason}."
                MatrixError(kind: .refused, errcode: nil, message: tr("the server refused the signature")))
        }
    }

    private static func storageKey(
        keyID: String, description: JSONValue, recoveryKey: RecoveryKey?,
        secret: VerificationSecret
    ) throws(VerificationFailure) -> SecretStorageKey {
        do {
            let key: SymmetricKey
            switch secret {
            case .passphrase(let passphrase):
                key = try SecretStorageKey.key(passphrase: passphrase, description: description)
            case .keyShaped(let text) where recoveryKey == nil:
                key = try SecretStorageKey.key(passphrase: text, description: description)
            default:
                // A recovery key was given (keyShaped texts that decode are one).
                key = recoveryKey?.key ?? SymmetricKey(size: .bits256)
            }
            return try SecretStorageKey(keyID: keyID, key: key, description: description)
        } catch {
            throw failure(error, passphrase: recoveryKey == nil)
        }
    }

    private static func failure(_ problem: SecretStorageKey.Problem, passphrase: Bool) -> VerificationFailure {
        switch problem {
        case .wrongKey: return .wrongKey(passphrase: passphrase)
        case .noPassphrase: return .noPassphrase
        case .notStoredUnderThisKey: return .notInSecretStorage
        case .unsupported(let algorithm):
            // TRANSLATORS: completes "Ferry cannot read the account's secret storage ({what})"; {algorithm} is the name
            // of an algorithm, such as "m.secret_storage.v1.aes-hmac-sha2".
            return .unreadable(tr("secret storage by {algorithm}", ["algorithm": algorithm]))
        case .malformed(let what): return .unreadable(what)
        }
    }
}
