import FerryContract
import Foundation
@testable import GLibAdapter
import XCTest

/// The Swift contract (FerryContract) against the interface XML, the one source of truth: every
/// method, signal and property name, and the arguments each typed call sends.
final class ContractTests: XCTestCase {
    func testEveryMethodSignalAndPropertyNameIsTheInterfacesOwn() throws {
        let xml = try InterfaceDocument.text()
        XCTAssertEqual(Set(Share1Method.allCases.map(\.rawValue)), names(of: "method", in: xml))
        XCTAssertEqual(Set(Share1Signal.allCases.map(\.rawValue)), names(of: "signal", in: xml))
        XCTAssertEqual(Set(Share1Property.allCases.map(\.rawValue)), names(of: "property", in: xml))
        XCTAssertTrue(xml.contains("<interface name=\"\(FerryBus.share1)\">"))
    }

    func testTheServiceParsesTheInterfaceWithoutItsComments() throws {
        let xml = Array(try InterfaceDocument.text().utf8)
        let parsed = InterfaceDescription.withoutComments(xml)

        XCTAssertEqual(parsed.last, 0)
        XCTAssertFalse(String(decoding: parsed.dropLast(), as: UTF8.self).contains("<!--"))
        XCTAssertNoThrow(try InterfaceDescription(xml: xml, interface: FerryBus.share1))
        XCTAssertEqual(InterfaceDescription.withoutComments(Array("a<!-- x -->b<!--y-->c".utf8)), Array("abc\0".utf8))
        XCTAssertEqual(InterfaceDescription.withoutComments(Array("a<!-- open".utf8)), Array("a<!-- open\0".utf8))
    }

    func testEveryTypedCallSendsTheArgumentsTheInterfaceDeclares() throws {
        let xml = try InterfaceDocument.text()
        let calls: [(Share1Method, [Variant])] = [
            (Share1.share(["text": .string("hi")]).method, Share1.share(["text": .string("hi")]).arguments),
            (Share1.getShare("s").method, Share1.getShare("s").arguments),
            (Share1.listShares().method, Share1.listShares().arguments),
            (Share1.cancel("s").method, Share1.cancel("s").arguments),
            (Share1.completeShare("s", destinations: ["!r"], message: "m").method,
             Share1.completeShare("s", destinations: ["!r"], message: "m").arguments),
            (Share1.retry("s").method, Share1.retry("s").arguments),
            (Share1.signIn(SignInRequest(homeserver: "h", method: .browser)).method, Share1.signIn(SignInRequest(homeserver: "h", method: .browser)).arguments),
            (Share1.signOut().method, Share1.signOut().arguments),
            (Share1.getLoginFlows("h").method, Share1.getLoginFlows("h").arguments),
            (Share1.getStatus().method, Share1.getStatus().arguments),
            (Share1.verifyDevice(.recoveryKey("k")).method, Share1.verifyDevice(.recoveryKey("k")).arguments),
            (Share1.setUpCrossSigning(password: "p").method, Share1.setUpCrossSigning(password: "p").arguments),
            (Share1.startEmojiVerification(deviceID: "D").method, Share1.startEmojiVerification(deviceID: "D").arguments),
            (Share1.answerEmojiVerification("v", match: true).method, Share1.answerEmojiVerification("v", match: true).arguments),
            (Share1.cancelEmojiVerification("v").method, Share1.cancelEmojiVerification("v").arguments),
            (Share1.getEmojiVerification().method, Share1.getEmojiVerification().arguments),
            (Share1.listDestinations("q", limit: 5).method, Share1.listDestinations("q", limit: 5).arguments),
        ]
        XCTAssertEqual(Set(calls.map(\.0)), Set(Share1Method.allCases), "a typed call for every method")
        for (method, arguments) in calls {
            XCTAssertEqual(arguments.map(\.typeString).joined(), inputSignature(of: method.rawValue, in: xml), method.rawValue)
        }
    }

    /// The `name` attributes of every `<kind name="…"` element.
    private func names(of kind: String, in xml: String) -> Set<String> {
        let pattern = try! NSRegularExpression(pattern: "<\(kind) name=\"([A-Za-z]+)\"")
        let range = NSRange(xml.startIndex..., in: xml)
        return Set(pattern.matches(in: xml, range: range).map { String(xml[Range($0.range(at: 1), in: xml)!]) })
    }

    /// The types of a method's `direction="in"` arguments, in order, as one signature.
    private func inputSignature(of method: String, in xml: String) -> String {
        if xml.contains("<method name=\"\(method)\"/>") { return "" }
        guard let start = xml.range(of: "<method name=\"\(method)\">"),
              let end = xml.range(of: "</method>", range: start.upperBound..<xml.endIndex) else { return "?" }
        let body = String(xml[start.upperBound..<end.lowerBound])
        let pattern = try! NSRegularExpression(pattern: "<arg type=\"([^\"]+)\" name=\"[^\"]*\" direction=\"in\"")
        return pattern.matches(in: body, range: NSRange(body.startIndex..., in: body))
            .map { String(body[Range($0.range(at: 1), in: body)!]) }.joined()
    }
}
