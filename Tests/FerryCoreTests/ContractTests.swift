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
        // Every typed call the clients can make, one per method (Share1RequestTests).
        let calls = Share1RequestTests.calls.map { ($0.method, $0.arguments) }
        XCTAssertEqual(Set(calls.map(\.0)), Set(Share1Method.allCases), "a typed call for every method")
        for (method, arguments) in calls {
            XCTAssertEqual(
                arguments.map(\.typeString).joined(), inputSignature(of: method.rawValue, in: xml), method.rawValue)
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
            let end = xml.range(of: "</method>", range: start.upperBound..<xml.endIndex)
        else { return "?" }
        let body = String(xml[start.upperBound..<end.lowerBound])
        let pattern = try! NSRegularExpression(pattern: "<arg type=\"([^\"]+)\" name=\"[^\"]*\" direction=\"in\"")
        return pattern.matches(in: body, range: NSRange(body.startIndex..., in: body))
            .map { String(body[Range($0.range(at: 1), in: body)!]) }.joined()
    }
}
