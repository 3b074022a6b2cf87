import FerryCore
import FerryCrypto
import FerryMatrix
import Foundation
import Testing
@testable import FerryEncryption

/// What each message means while Ferry waits for one of the person's devices to answer its
/// emoji verification request, in every order a device can send them: built by FerryCrypto's own
/// verification messages, as the person's other device (Element, nio) would send them.
@Suite struct VerificationWaitTests {
    let ferry = OlmAccount()
    let phoneAccount = OlmAccount()
    let laptopAccount = OlmAccount()
    let phone: DeviceIdentity
    let laptop: DeviceIdentity
    let wait: VerificationWait

    init() throws {
        phone = try DeviceIdentity(
            verifying: phoneAccount.deviceKeys(userID: "@me:x", deviceID: "PHONE"), userID: "@me:x", deviceID: "PHONE")
        laptop = try DeviceIdentity(
            verifying: laptopAccount.deviceKeys(userID: "@me:x", deviceID: "LAPTOP"), userID: "@me:x",
            deviceID: "LAPTOP")
        wait = VerificationWait(
            us: SasParty(userID: "@me:x", deviceID: "FERRY", ed25519: ferry.ed25519),
            devices: ["PHONE": phone, "LAPTOP": laptop], requestID: "req", asked: ["PHONE", "LAPTOP"])
    }

    func event(_ message: VerificationMessage, from sender: String = "@me:x") -> ToDeviceEvent {
        ToDeviceEvent(sender: sender, type: message.type, content: message.content)
    }

    /// The device id a step goes on with, and the types of what it sends; nil for another step.
    func going(_ step: VerificationWait.Step) -> (device: String, sending: [String])? {
        guard case .go(let sas, let device, let sending) = step else { return nil }
        #expect(sas.them.deviceID == device)
        return (device, sending.map(\.type))
    }

    @Test func aReadyToOurRequestStartsWithThatDevice() throws {
        let step = wait.step(for: event(VerificationRequest.ready(transactionID: "req", fromDevice: "PHONE")))
        let go = try #require(going(step))
        #expect(go.device == "PHONE" && go.sending == [VerificationMessage.start])
    }

    @Test func aReadyWithoutEmojiIsRefusedToThatDeviceOnly() throws {
        let ready = VerificationMessage(
            type: VerificationMessage.ready,
            content: ["transaction_id": "req", "from_device": "PHONE", "methods": ["m.qr_code.show.v1"]])
        guard case .refuse(let refusal, let device) = wait.step(for: event(ready)) else {
            Issue.record("not refused")
            return
        }
        #expect(device == "PHONE" && refusal.type == VerificationMessage.cancel)
        #expect(refusal.content["code"] == "m.unknown_method")
    }

    @Test func aRequestOfTheOtherDeviceIsReadiedAndStartedAtOnce() throws {
        let request = VerificationRequest.request(transactionID: "theirs", fromDevice: "LAPTOP", now: Date())
        let go = try #require(going(wait.step(for: event(request))))
        #expect(go.device == "LAPTOP" && go.sending == [VerificationMessage.ready, VerificationMessage.start])
    }

    @Test func aStartOfTheOtherDeviceIsAccepted() throws {
        let laptopParty = SasParty(laptop)
        let ferryParty = SasParty(userID: "@me:x", deviceID: "FERRY", ed25519: ferry.ed25519)
        let (_, start) = SasVerification.start(transactionID: "theirs", us: laptopParty, them: ferryParty)
        let go = try #require(going(wait.step(for: event(start))))
        #expect(go.device == "LAPTOP" && go.sending == [VerificationMessage.accept])
    }

    @Test func aCancelOfOurRequestEndsItAndTheOthersAskedAreTold() throws {
        let cancel = VerificationCancel(.user, "no thanks").message(transactionID: "req")
        guard case .declined(let read, let others) = wait.step(for: event(cancel)) else {
            Issue.record("not declined")
            return
        }
        #expect(read.code == .user && others == ["PHONE", "LAPTOP"])
    }

    @Test func whatIsNotForThisVerificationIsIgnored() {
        let ready = VerificationRequest.ready(transactionID: "req", fromDevice: "PHONE")
        // Another user (even naming the person's device), another transaction, a device that is
        // not the person's, a device that was not asked, a message of no verification.
        let notAsked = VerificationWait(
            us: wait.us, devices: wait.devices, requestID: "req", asked: ["LAPTOP"])
        let cases: [(VerificationWait, ToDeviceEvent)] = [
            (wait, event(ready, from: "@eve:x")),
            (wait, event(VerificationRequest.ready(transactionID: "other", fromDevice: "PHONE"))),
            (wait, event(VerificationRequest.ready(transactionID: "req", fromDevice: "EVE"))),
            (notAsked, event(ready)),
            (wait, ToDeviceEvent(sender: "@me:x", type: "m.room_key_request", content: ["from_device": "PHONE"])),
            (wait, event(VerificationCancel(.user, "x").message(transactionID: "req"), from: "@eve:x")),
        ]
        for (wait, message) in cases {
            guard case .ignore = wait.step(for: message) else {
                Issue.record("\(message.type) from \(message.sender) was not ignored")
                continue
            }
        }
    }
}
