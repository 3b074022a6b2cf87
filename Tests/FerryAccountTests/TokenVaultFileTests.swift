import Foundation
import Logging
import Testing
@testable import FerryAccount

/// Without a Secret Service, each account's secret is a file of its own (TokenVault).
struct TokenVaultFileTests {
    let directory: String
    let vault: TokenVault

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-vault-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        vault = TokenVault(stateDirectory: directory, logger: Logger(label: "test"))
    }

    @Test func eachAccountHasItsOwnFileEvenWithASlashInItsUserID() throws {
        #expect(vault.writeFile("work-token", userID: "@me:work.example"))
        #expect(vault.writeFile("home-token", userID: "@me/home:home.example"))

        #expect(vault.token(userID: "@me:work.example", storage: .file) == "work-token")
        #expect(vault.token(userID: "@me/home:home.example", storage: .file) == "home-token")
        #expect(vault.token(userID: "@someone:else", storage: .file) == nil)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory)
        #expect(names.count == 2 && names.allSatisfy { $0.hasPrefix("access-token-") })
        let attributes = try FileManager.default.attributesOfItem(atPath: vault.filePath(for: "@me:work.example"))
        #expect(attributes[.posixPermissions] as? Int == 0o600)
    }

    @Test func theFileOfASingleAccountFerryIsTakenOverByTheFirstAccountToReadIt() throws {
        try "old-token".write(toFile: directory + "/access-token", atomically: false, encoding: .utf8)

        #expect(vault.token(userID: "@me:x", storage: .file) == "old-token")

        #expect(vault.token(userID: "@other:x", storage: .file) == nil, "no second account reads it as its own")
        #expect(!FileManager.default.fileExists(atPath: directory + "/access-token"))
        #expect(vault.token(userID: "@me:x", storage: .file) == "old-token")
    }
}
