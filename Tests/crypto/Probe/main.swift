// ferry-crypto-probe: FerryCrypto on standard input and output, one JSON request a line and one
// JSON answer a line, so that the interoperability tests can hold a conversation between Ferry's
// protocol code and implementations we did not write (libolm through python-olm, vodozemac).
// Test-only: not installed, and it holds throwaway keys in memory only.
import FerryCore
import FerryCrypto
import FerryMatrix
import Foundation

struct Request: Decodable {
    let op: String
    var user_id: String?
    var device_id: String?
    var count: Int?
    var identity_key: String?
    var one_time_key: String?
    var type: Int?
    var body: String?
    var plaintext: String?
    var session_key: String?
    var ciphertext: String?
    var index: UInt32?
    var chunk: Int?
    var json: JSONValue?
    var homeserver: String?
    var device: JSONValue?
    var signed_key: JSONValue?
    var room_id: String?
    var sender_user: String?
    var sender_device: String?
    var event_type: String?
    var content: JSONValue?
    var token: String?
    var transaction_id: String?
    var them: JSONValue?
    var master_key: String?
    var ed25519: String?
    var sender: String?
    var code: String?
    var reason: String?
}

var account = OlmAccount()
var olm: OlmSession?
var outbound: OutboundGroupSession?
var inbound: InboundGroupSession?
/// SAS verifications by transaction id: a test may run one beside another (or a stale one).
var verifications: [String: SasVerification] = [:]

func bytes(_ base64: String?) -> [UInt8] { UnpaddedBase64.decode(base64 ?? "") ?? [] }

/// This side of a SAS: the request's user and device, the account's Ed25519 key unless another
/// is given, and the master key to vouch for when one is given.
@MainActor func ourParty(_ request: Request) -> SasParty {
    SasParty(
        userID: request.user_id ?? "@probe:localhost", deviceID: request.device_id ?? "PROBE",
        ed25519: request.ed25519 ?? account.ed25519, masterKey: request.master_key)
}

/// The other side as the test describes it: {"user_id", "device_id", "ed25519", "master_key"?}.
func theirParty(_ request: Request) -> SasParty {
    let them = request.them ?? .null
    return SasParty(
        userID: them["user_id"]?.stringValue ?? "", deviceID: them["device_id"]?.stringValue ?? "",
        ed25519: them["ed25519"]?.stringValue ?? "", masterKey: them["master_key"]?.stringValue)
}

func message(_ message: VerificationMessage) -> JSONValue {
    ["type": .string(message.type), "content": message.content]
}

func phase(_ verification: SasVerification) -> JSONValue {
    switch verification.phase {
    case .awaitingAccept: return "awaiting_accept"
    case .awaitingKey: return "awaiting_key"
    case .comparing: return "comparing"
    case .awaitingMac: return "awaiting_mac"
    case .done: return "done"
    case .cancelledByUs(let cancel): return .string("cancelled_by_us:" + cancel.code.rawValue)
    case .cancelledByThem(let cancel): return .string("cancelled_by_them:" + cancel.code.rawValue)
    }
}

/// What a SAS step answers: its messages, where the verification stands, and the code of the
/// cancel it threw (whose message is then the one message).
@MainActor func sasStep(
    _ id: String, replyTo: String? = nil,
    _ step: (inout SasVerification) throws(VerificationCancel) -> [VerificationMessage]
) -> JSONValue {
    guard var verification = verifications[id] else { return ["error": .string("no verification \(id)")] }
    var answer: [String: JSONValue] = [:]
    do {
        answer["messages"] = .array(try step(&verification).map(message))
    } catch {
        answer["messages"] = [message(error.message(transactionID: replyTo ?? id))]
        answer["cancel"] = .string(error.code.rawValue)
    }
    verifications[id] = verification
    answer["phase"] = phase(verification)
    return .object(answer)
}

@MainActor func answer(_ request: Request) async throws -> JSONValue {
    switch request.op {
    case "account":
        let user = request.user_id ?? "@probe:localhost", device = request.device_id ?? "PROBE"
        account.generateOneTimeKeys(request.count ?? 0)
        if request.count == 0 { account.generateFallbackKey() }
        let keys = account.unpublishedKeys(userID: user, deviceID: device)
        account.markKeysAsPublished()
        return [
            "curve25519": .string(account.curve25519), "ed25519": .string(account.ed25519),
            "device_keys": account.deviceKeys(userID: user, deviceID: device),
            "one_time_keys": .object(keys.oneTimeKeys), "fallback_keys": .object(keys.fallbackKeys),
        ]
    case "olm_outbound":
        olm = try OlmSession.outbound(
            from: account, theirIdentityKey: request.identity_key!, theirOneTimeKey: request.one_time_key!)
        return ["session_id": .string(olm!.sessionID)]
    case "olm_inbound":
        let (session, plaintext) = try OlmSession.inbound(
            to: &account, theirIdentityKey: request.identity_key!, preKeyMessage: request.body!)
        olm = session
        return [
            "session_id": .string(session.sessionID), "plaintext": .string(String(decoding: plaintext, as: UTF8.self)),
        ]
    case "olm_encrypt":
        let (type, body) = try olm!.encrypt(Array(request.plaintext!.utf8))
        return ["type": .int(Int64(type)), "body": .string(body)]
    case "olm_decrypt":
        let plaintext = try olm!.decrypt(type: request.type!, body: request.body!)
        return ["plaintext": .string(String(decoding: plaintext, as: UTF8.self))]
    case "megolm_new":
        outbound = OutboundGroupSession()
        return ["session_id": .string(outbound!.sessionID), "session_key": .string(outbound!.sessionKey)]
    case "megolm_encrypt":
        let index = outbound!.messageIndex
        let ciphertext = try outbound!.encrypt(Array(request.plaintext!.utf8))
        return ["ciphertext": .string(ciphertext), "index": .int(Int64(index))]
    case "megolm_session_key":
        return ["session_key": .string(outbound!.sessionKey), "index": .int(Int64(outbound!.messageIndex))]
    case "megolm_inbound":
        inbound = try InboundGroupSession(sessionKey: request.session_key!)
        return ["session_id": .string(inbound!.sessionID)]
    case "megolm_decrypt":
        let (plaintext, index) = try inbound!.decrypt(request.ciphertext!)
        return ["plaintext": .string(String(decoding: plaintext, as: UTF8.self)), "index": .int(Int64(index))]
    case "megolm_export_at":
        return ["exported": inbound!.export(at: request.index!).map(JSONValue.string) ?? .null]
    case "backup_key_data":
        // The outbound session's key from the index it is at, for the backup `json` describes
        // (its auth_data), trusted by `master_key` or by this probe's device (`device_id`).
        let backup = try KeyBackup(
            version: "1", algorithm: request.reason ?? KeyBackup.algorithm, authData: request.json!,
            userID: request.user_id ?? "@probe:localhost",
            trustedMaster: request.master_key, device: (request.device_id ?? "PROBE", account.ed25519))
        return try backup.keyBackupData(
            exported: outbound!.exportedKey, senderKey: account.curve25519, senderEd25519: account.ed25519)
    case "attachment_encrypt":
        var encryptor = AttachmentEncryptor()
        let plain = bytes(request.body), step = max(16, (request.chunk ?? 65536) / 16 * 16)
        var out: [UInt8] = []
        for start in stride(from: 0, to: plain.count, by: step) {
            out += try encryptor.encrypt(Array(plain[start..<min(plain.count, start + step)]))
        }
        return [
            "ciphertext": .string(UnpaddedBase64.encode(out)), "file": encryptor.file(url: "mxc://localhost/probe"),
        ]
    case "upload_keys":
        // The device's keys to a real homeserver, as the service will do at sign-in.
        let user = request.user_id!, device = request.device_id!
        let api = DeviceKeysAPI(http: MatrixHTTP(baseURL: request.homeserver!, accessToken: request.token!))
        account.generateOneTimeKeys(request.count ?? 0)
        account.generateFallbackKey()
        let keys = account.unpublishedKeys(userID: user, deviceID: device)
        let counts = try await api.upload(
            deviceKeys: account.deviceKeys(userID: user, deviceID: device),
            oneTimeKeys: keys.oneTimeKeys, fallbackKeys: keys.fallbackKeys)
        account.markKeysAsPublished()
        return [
            "one_time_key_counts": .object(counts.mapValues { .int(Int64($0)) }),
            "curve25519": .string(account.curve25519),
            "ed25519": .string(account.ed25519),
        ]
    case "verify_device":
        let identity = try DeviceIdentity(
            verifying: request.device!, userID: request.user_id!, deviceID: request.device_id!)
        return ["curve25519": .string(identity.curve25519), "ed25519": .string(identity.ed25519)]
    case "share_room_key":
        // What the sender will do per device: check its keys and its claimed key, start an Olm
        // session, and send it the room's Megolm key.
        let identity = try DeviceIdentity(
            verifying: request.device!, userID: request.user_id!, deviceID: request.device_id!)
        var session = try OlmSession.outbound(
            from: account, theirIdentityKey: identity.curve25519,
            theirOneTimeKey: identity.verifiedOneTimeKey(request.signed_key!))
        if outbound == nil { outbound = OutboundGroupSession() }
        let sender = EncryptedEvents.Sender(
            userID: request.sender_user!, deviceID: request.sender_device!, account: account)
        let content = try EncryptedEvents.toDevice(
            type: "m.room_key",
            content: EncryptedEvents.roomKey(outbound!, roomID: request.room_id!, sharedHistory: false),
            from: sender, to: identity, session: &session)
        olm = session
        return ["content": content]
    case "room_event":
        let sender = EncryptedEvents.Sender(
            userID: request.sender_user!, deviceID: request.sender_device!, account: account)
        return [
            "content": try EncryptedEvents.roomEvent(
                type: request.event_type!, content: request.content!, roomID: request.room_id!,
                from: sender, session: &outbound!)
        ]
    case "sas_start":
        let id = request.transaction_id ?? SasVerification.newTransactionID()
        let (verification, start) = SasVerification.start(
            transactionID: id, us: ourParty(request), them: theirParty(request))
        verifications[id] = verification
        return ["message": message(start), "transaction_id": .string(id), "phase": phase(verification)]
    case "sas_accept":
        // The start as the other side sent it; a refusal answers its cancel, as the service would.
        do {
            let (verification, accept) = try SasVerification.accept(
                request.content!, sender: request.sender!, us: ourParty(request),
                them: theirParty(request))
            verifications[verification.transactionID] = verification
            return [
                "message": message(accept), "transaction_id": .string(verification.transactionID),
                "phase": phase(verification),
            ]
        } catch {
            let id = VerificationMessage.transactionID(of: request.content!) ?? ""
            return ["message": message(error.message(transactionID: id)), "cancel": .string(error.code.rawValue)]
        }
    case "sas_receive":
        // A cancel for a message of another transaction goes to that transaction.
        let replyTo = request.content.flatMap(VerificationMessage.transactionID(of:)) ?? request.transaction_id!
        return sasStep(request.transaction_id!, replyTo: replyTo) { (verification) throws(VerificationCancel) in
            try verification.receive(type: request.event_type!, content: request.content!, sender: request.sender!)
        }
    case "sas_show":
        guard let verification = verifications[request.transaction_id!] else {
            return ["error": "no such verification"]
        }
        guard let sas = verification.shortAuthenticationString else { return ["phase": phase(verification)] }
        return [
            "emoji": .array(sas.emoji.map { [.string($0.emoji), .string($0.description)] }),
            "emoji_numbers": .array(sas.emojiNumbers.map { .int(Int64($0)) }),
            "decimals": .array(sas.decimals.map { .int(Int64($0)) }),
            "methods": .array(verification.shortAuthenticationMethods.map(JSONValue.string)),
            "phase": phase(verification),
        ]
    case "sas_confirm":
        return sasStep(request.transaction_id!) { $0.confirm() }
    case "sas_cancel":
        return sasStep(request.transaction_id!) { verification in
            verification.cancel(.init(rawValue: request.code ?? "m.user"), reason: request.reason ?? "cancelled").map {
                [$0]
            } ?? []
        }
    case "sas_state":
        guard let verification = verifications[request.transaction_id!] else {
            return ["error": "no such verification"]
        }
        return [
            "phase": phase(verification),
            "verified_master_key": verification.verifiedMasterKey.map(JSONValue.string) ?? .null,
            "they_are_done": .bool(verification.theyAreDone), "we_started": .bool(verification.weStarted),
        ]
    case "sign_json":
        return ["signature": .string(account.sign(CanonicalJSON.encode(request.json ?? .null)))]
    case "canonical":
        return ["canonical": .string(CanonicalJSON.string(request.json ?? .null))]
    default:
        return ["error": .string("unknown op \(request.op)")]
    }
}

while let line = readLine() {
    let reply: JSONValue
    do {
        reply = try await answer(JSONDecoder().decode(Request.self, from: Data(line.utf8)))
    } catch {
        reply = ["error": .string("\(error)")]
    }
    FileHandle.standardOutput.write(Data((CanonicalJSON.string(reply) + "\n").utf8))
}
