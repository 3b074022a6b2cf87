import Crypto
import FerryCore

/// The strings SAS binds its derivations to. Each names both sides and the transaction, so that
/// a secret shared in one verification yields nothing usable in another, or in the other
/// direction. Get one character wrong and both sides still agree with themselves, so these are
/// checked against libolm's and vodozemac's clients (Tests/integration/verification/test_sas_interop.py).
enum SasInfo {
    /// The HKDF info of the SAS bytes for `curve25519-hkdf-sha256`: the starting side first, each
    /// side as user, device and the ephemeral key it sent, all joined by `|`. (The deprecated
    /// `curve25519` info left the keys out; Ferry does not speak it.)
    static func sas(
        starter: SasParty, starterKey: String, accepter: SasParty, accepterKey: String,
        transactionID: String
    ) -> String {
        [
            "MATRIX_KEY_VERIFICATION_SAS", starter.userID, starter.deviceID, starterKey,
            accepter.userID, accepter.deviceID, accepterKey, transactionID,
        ].joined(separator: "|")
    }

    /// The HKDF info of a MAC without its last part, which is the key id MACed or `KEY_IDS`: the
    /// sending side, then the receiving side, then the transaction, run together without any
    /// separator (so the receiver builds it with the roles swapped).
    static func mac(sender: SasParty, receiver: SasParty, transactionID: String) -> String {
        "MATRIX_KEY_VERIFICATION_MAC" + sender.userID + sender.deviceID + receiver.userID + receiver.deviceID
            + transactionID
    }

    /// What the `KEY_IDS` MAC covers: the key ids, sorted, joined by commas. Sorted by UTF-8
    /// bytes, the order of every other client (Swift's `<` on strings would normalise first).
    static func keyIDs(_ ids: some Sequence<String>) -> String {
        ids.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }.joined(separator: ",")
    }

    /// The accepting side's commitment: SHA-256 of its ephemeral key (the base64 text it will
    /// send) followed by the canonical JSON of the start content, in unpadded base64. The start
    /// content is the whole content as the starting side sent it, fields we do not know included:
    /// that is what the starting side hashes too.
    static func commitment(publicKey: String, start: JSONValue) -> String {
        UnpaddedBase64.encode(SHA256.hash(data: Array(publicKey.utf8) + CanonicalJSON.encode(start)))
    }
}
