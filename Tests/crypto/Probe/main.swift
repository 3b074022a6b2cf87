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
}

var account = OlmAccount()
var olm: OlmSession?
var outbound: OutboundGroupSession?
var inbound: InboundGroupSession?

func bytes(_ base64: String?) -> [UInt8] { UnpaddedBase64.decode(base64 ?? "") ?? [] }

@MainActor func answer(_ request: Request) async throws -> JSONValue {
    switch request.op {
    case "account":
        let user = request.user_id ?? "@probe:localhost", device = request.device_id ?? "PROBE"
        account.generateOneTimeKeys(request.count ?? 0)
        if request.count == 0 { account.generateFallbackKey() }
        let keys = account.unpublishedKeys(userID: user, deviceID: device)
        account.markKeysAsPublished()
        return ["curve25519": .string(account.curve25519), "ed25519": .string(account.ed25519),
                "device_keys": account.deviceKeys(userID: user, deviceID: device),
                "one_time_keys": .object(keys.oneTimeKeys), "fallback_keys": .object(keys.fallbackKeys)]
    case "olm_outbound":
        olm = try OlmSession.outbound(from: account, theirIdentityKey: request.identity_key!, theirOneTimeKey: request.one_time_key!)
        return ["session_id": .string(olm!.sessionID)]
    case "olm_inbound":
        let (session, plaintext) = try OlmSession.inbound(to: &account, theirIdentityKey: request.identity_key!, preKeyMessage: request.body!)
        olm = session
        return ["session_id": .string(session.sessionID), "plaintext": .string(String(decoding: plaintext, as: UTF8.self))]
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
    case "attachment_encrypt":
        var encryptor = AttachmentEncryptor()
        let plain = bytes(request.body), step = max(16, (request.chunk ?? 65536) / 16 * 16)
        var out: [UInt8] = []
        for start in stride(from: 0, to: plain.count, by: step) {
            out += try encryptor.encrypt(Array(plain[start..<min(plain.count, start + step)]))
        }
        return ["ciphertext": .string(UnpaddedBase64.encode(out)), "file": encryptor.file(url: "mxc://localhost/probe")]
    case "upload_keys":
        // The device's keys to a real homeserver, as the service will do at sign-in.
        let user = request.user_id!, device = request.device_id!
        let api = DeviceKeysAPI(http: MatrixHTTP(baseURL: request.homeserver!, accessToken: request.token!))
        account.generateOneTimeKeys(request.count ?? 0)
        account.generateFallbackKey()
        let keys = account.unpublishedKeys(userID: user, deviceID: device)
        let counts = try await api.upload(deviceKeys: account.deviceKeys(userID: user, deviceID: device),
                                          oneTimeKeys: keys.oneTimeKeys, fallbackKeys: keys.fallbackKeys)
        account.markKeysAsPublished()
        return ["one_time_key_counts": .object(counts.mapValues { .int(Int64($0)) }), "curve25519": .string(account.curve25519),
                "ed25519": .string(account.ed25519)]
    case "verify_device":
        let identity = try DeviceIdentity(verifying: request.device!, userID: request.user_id!, deviceID: request.device_id!)
        return ["curve25519": .string(identity.curve25519), "ed25519": .string(identity.ed25519)]
    case "share_room_key":
        // What the sender will do per device: check its keys and its claimed key, start an Olm
        // session, and send it the room's Megolm key.
        let identity = try DeviceIdentity(verifying: request.device!, userID: request.user_id!, deviceID: request.device_id!)
        var session = try OlmSession.outbound(from: account, theirIdentityKey: identity.curve25519,
                                              theirOneTimeKey: identity.verifiedOneTimeKey(request.signed_key!))
        if outbound == nil { outbound = OutboundGroupSession() }
        let sender = EncryptedEvents.Sender(userID: request.sender_user!, deviceID: request.sender_device!, account: account)
        let content = try EncryptedEvents.toDevice(
            type: "m.room_key", content: EncryptedEvents.roomKey(outbound!, roomID: request.room_id!, sharedHistory: false),
            from: sender, to: identity, session: &session)
        olm = session
        return ["content": content]
    case "room_event":
        let sender = EncryptedEvents.Sender(userID: request.sender_user!, deviceID: request.sender_device!, account: account)
        return ["content": try EncryptedEvents.roomEvent(type: request.event_type!, content: request.content!, roomID: request.room_id!,
                                                          from: sender, session: &outbound!)]
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
