import FerryCore
import Foundation
import Testing
@testable import FerryMatrix

/// What every message Ferry sends says, whatever it carries.
struct MessageContentTests {
    private func json(_ content: MessageContent) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: JSONEncoder().encode(content)) as? [String: Any])
    }

    @Test func everyMessageMentionsNobodyEvenWhenItsTextNamesSomeone() throws {
        let text = try json(MessageContent(msgtype: "m.text", body: "@room: ask @ann:example.org"))
        #expect((text["m.mentions"] as? [String: Any])?.isEmpty == true, "\(text)")
        let file = try json(
            MessageContent(msgtype: "m.image", body: "Look", url: "mxc://s/x", filename: "harbour.jpg"))
        #expect((file["m.mentions"] as? [String: Any])?.isEmpty == true, "\(file)")
    }

}
