import FerryCore
import FerryCrypto
import FerryMatrix

/// The Ed25519 key Ferry first saw for each device (`device:<user>|<device id>`). A device id is
/// one device for good: keys that change under it are an impostor's (or a server's) as far as
/// anyone can tell, so that device gets no room key, however well its new keys are self-signed.
/// matrix-rust-sdk refuses such a device the same way.
extension Encryption {
    /// `listed` without the devices whose Ed25519 key is not the one first seen under their id;
    /// devices seen for the first time are remembered.
    func pinned(_ listed: KeySharing.Listed, session: Session) throws(EncryptionFailure) -> KeySharing.Listed {
        let store = try store(for: session)
        var pinned = listed
        var firstSeen: [CryptoStore.Change] = []
        for (user, devices) in listed.devices {
            for (deviceID, device) in devices {
                let name = "device:\(user)|\(deviceID)"
                guard let seen = try store.load(name, as: String.self) else {
                    firstSeen.append(CryptoStore.set(name, device.ed25519))
                    continue
                }
                guard seen != device.ed25519 else { continue }
                pinned.devices[user]?[deviceID] = nil
                pinned.verifiedByOwner.remove(device.curve25519)
                logger.warning(
                    "a device's signing key changed under the same id; it gets no room key",
                    metadata: ["user": "\(user)", "device": "\(deviceID)"])
            }
        }
        if !firstSeen.isEmpty { try store.write(firstSeen) }
        return pinned
    }
}
