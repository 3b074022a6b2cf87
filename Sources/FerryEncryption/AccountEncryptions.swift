import Synchronization

/// Each account's end-to-end encryption, made when it is first needed: nothing crypto is shared
/// between accounts. Every `Encryption` has its own records (`Outbox.cryptoRecords(of:)`), its
/// own seal key, and its own actor, so one account's ratchet steps never wait for another's.
public final class AccountEncryptions: Sendable {
    private let made = Mutex<[String: Encryption]>([:])
    private let make: @Sendable (_ userID: String) -> Encryption

    /// `make` builds the encryption of one account; it is called once per user id.
    public init(make: @escaping @Sendable (_ userID: String) -> Encryption) {
        self.make = make
    }

    /// The encryption of `userID`'s account (the same one every time).
    public func of(_ userID: String) -> Encryption {
        made.withLock { made in
            if let encryption = made[userID] { return encryption }
            let encryption = make(userID)
            made[userID] = encryption
            return encryption
        }
    }
}
