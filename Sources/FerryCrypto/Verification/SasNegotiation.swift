import FerryCore

/// `m.key.verification.start` with `method: m.sas.v1`, as read from the other side: what it
/// offers, and what Ferry picks from that offer. Every field is the other side's, so each is
/// checked for its type before use, and an offer without something Ferry speaks is refused with
/// `m.unknown_method` rather than half-taken.
public struct SasStart: Sendable {
    /// The one key agreement Ferry speaks (the deprecated `curve25519` left the keys out of the
    /// SAS info; new implementations are told not to implement it).
    static let keyAgreement = "curve25519-hkdf-sha256"
    /// The one hash the spec has.
    static let hash = "sha256"
    /// The ways to show the SAS, both of which Ferry can.
    static let sasMethods = ["decimal", "emoji"]

    /// The transaction the start belongs to.
    public let transactionID: String
    /// The device that sent it: the caller looks its keys up before accepting.
    public let fromDevice: String
    /// The content exactly as received: the commitment covers it, unknown fields and all.
    let content: JSONValue
    /// The MAC method picked: v2 whenever offered (the spec: if both speak v2, v1 must not be used).
    let macMethod: SasMacMethod
    /// The SAS methods both sides speak, in the spec's order.
    let sasMethods: [String]

    /// Reads a start; throws the cancel to send when it is malformed or offers nothing in common.
    public init(reading content: JSONValue) throws(VerificationCancel) {
        guard content.objectValue != nil, let id = VerificationMessage.transactionID(of: content),
            let device = content["from_device"]?.stringValue, !device.isEmpty,
            let method = content["method"]?.stringValue
        else {
            throw VerificationCancel(.invalidMessage, "a start without a transaction, device or method")
        }
        guard method == VerificationMessage.sasMethod else {
            throw VerificationCancel(.unknownMethod, "a start for a method other than m.sas.v1")
        }
        guard let agreements = stringList(content["key_agreement_protocols"]),
            let hashes = stringList(content["hashes"]),
            let macs = stringList(content["message_authentication_codes"]),
            let strings = stringList(content["short_authentication_string"])
        else {
            throw VerificationCancel(.invalidMessage, "a start whose offers are not lists of names")
        }
        guard agreements.contains(Self.keyAgreement), hashes.contains(Self.hash),
            let mac = SasMacMethod.preference.first(where: { macs.contains($0.rawValue) })
        else {
            throw VerificationCancel(.unknownMethod, "no key agreement, hash or MAC in common")
        }
        let shown = Self.sasMethods.filter(strings.contains)
        guard !shown.isEmpty else { throw VerificationCancel(.unknownMethod, "no way to show the SAS in common") }
        transactionID = id
        fromDevice = device
        self.content = content
        macMethod = mac
        sasMethods = shown
    }

    /// Our start: every method Ferry speaks, best first.
    static func ours(transactionID: String, fromDevice: String) -> JSONValue {
        [
            "transaction_id": .string(transactionID), "from_device": .string(fromDevice),
            "method": .string(VerificationMessage.sasMethod),
            "key_agreement_protocols": [.string(keyAgreement)], "hashes": [.string(hash)],
            "message_authentication_codes": .array(SasMacMethod.preference.map { .string($0.rawValue) }),
            "short_authentication_string": .array(sasMethods.map(JSONValue.string)),
        ]
    }
}

/// `m.key.verification.accept`, as the starting side reads it: the choices the other side made
/// from our offer, and its commitment to the key it has not sent yet.
struct SasAccept {
    let macMethod: SasMacMethod
    let sasMethods: [String]
    let commitment: String

    /// Reads an accept to our start; a choice we did not offer is `m.unknown_method`.
    init(reading content: JSONValue) throws(VerificationCancel) {
        guard let agreement = content["key_agreement_protocol"]?.stringValue, let hash = content["hash"]?.stringValue,
            let mac = content["message_authentication_code"]?.stringValue,
            let strings = stringList(content["short_authentication_string"]),
            let commitment = content["commitment"]?.stringValue
        else {
            throw VerificationCancel(.invalidMessage, "an accept without its choices or commitment")
        }
        guard agreement == SasStart.keyAgreement, hash == SasStart.hash, let method = SasMacMethod(rawValue: mac),
            !strings.isEmpty, strings.allSatisfy(SasStart.sasMethods.contains)
        else {
            throw VerificationCancel(.unknownMethod, "an accept that chose what the start did not offer")
        }
        macMethod = method
        sasMethods = SasStart.sasMethods.filter(strings.contains)
        self.commitment = commitment
    }

    /// Our accept of `start`, committing to `publicKey`.
    static func content(accepting start: SasStart, publicKey: String) -> JSONValue {
        [
            "transaction_id": .string(start.transactionID), "method": .string(VerificationMessage.sasMethod),
            "key_agreement_protocol": .string(SasStart.keyAgreement), "hash": .string(SasStart.hash),
            "message_authentication_code": .string(start.macMethod.rawValue),
            "short_authentication_string": .array(start.sasMethods.map(JSONValue.string)),
            "commitment": .string(SasInfo.commitment(publicKey: publicKey, start: start.content)),
        ]
    }
}
