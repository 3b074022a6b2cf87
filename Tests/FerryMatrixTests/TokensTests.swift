@testable import FerryMatrix
import Foundation
import NIOConcurrencyHelpers
import XCTest

/// Expiring sign-ins: how a pair is kept, when it is renewed, and that every request waiting on
/// one expired token shares a single renewal whose pair is kept before it is used. The server is
/// an in-process responder speaking the spec's `/refresh` and its soft-logout 401.
final class TokensTests: XCTestCase {
    func testAPairWithARefreshTokenIsKeptAsJSONAndReadBack() throws {
        let now = Date(timeIntervalSince1970: 1_790_000_000)
        let pair = Tokens.Pair(access: "syt_a", refresh: "syr_r", expiresInMilliseconds: 300_000, now: now)

        let kept = Tokens.kept(pair)
        let read = try XCTUnwrap(Tokens.fromKept(kept))

        XCTAssertTrue(kept.hasPrefix("{"))
        XCTAssertEqual(read.access, "syt_a")
        XCTAssertEqual(read.refresh, "syr_r")
        XCTAssertEqual(read.lifetimeMilliseconds, 300_000)
        XCTAssertEqual(try XCTUnwrap(read.expiresAt).timeIntervalSince1970, 1_790_000_300, accuracy: 0.001)
    }

    func testATokenWithoutRefreshIsKeptAsTheTokenAloneAsBefore() {
        XCTAssertEqual(Tokens.kept(Tokens.Pair(access: "syt_plain")), "syt_plain")
        XCTAssertEqual(Tokens.fromKept("syt_plain"), Tokens.Pair(access: "syt_plain"))
        XCTAssertNil(Tokens.fromKept(""))
        XCTAssertNil(Tokens.fromKept("{not json"))
        XCTAssertNil(Tokens.fromKept(#"{"refresh_token":"r"}"#))
    }

    func testALifetimeThatIsNoNumberOfMillisecondsMeansNoKnownExpiry() {
        for odd in [0, -5, Int64(1e15)] {
            let pair = Tokens.Pair(access: "a", refresh: "r", expiresInMilliseconds: odd)
            XCTAssertNil(pair.expiresAt, "\(odd)")
            XCTAssertFalse(pair.renewsEarly(now: Date.distantFuture))
        }
    }

    func testATokenIsRenewedWithinATenthOfItsLifetimeAtMostThirtySecondsEarly() {
        let now = Date(timeIntervalSince1970: 1_000)
        let long = Tokens.Pair(access: "a", refresh: "r", expiresInMilliseconds: 3_600_000, now: now)
        XCTAssertFalse(long.renewsEarly(now: now.addingTimeInterval(3_600 - 31)))
        XCTAssertTrue(long.renewsEarly(now: now.addingTimeInterval(3_600 - 29)))

        let short = Tokens.Pair(access: "a", refresh: "r", expiresInMilliseconds: 10_000, now: now)
        XCTAssertFalse(short.renewsEarly(now: now.addingTimeInterval(8.9)))
        XCTAssertTrue(short.renewsEarly(now: now.addingTimeInterval(9.1)))

        let unrenewable = Tokens.Pair(access: "a", expiresInMilliseconds: 10_000, now: now)
        XCTAssertFalse(unrenewable.renewsEarly(now: now.addingTimeInterval(60)))
    }

    func testAnUploadStartsWithATokenNoMoreThanATenthOfItsLifetimeOld() {
        let now = Date(timeIntervalSince1970: 1_000)
        let pair = Tokens.Pair(access: "a", refresh: "r", expiresInMilliseconds: 300_000, now: now)
        XCTAssertFalse(pair.renewsBeforeUpload(now: now.addingTimeInterval(29)))
        XCTAssertTrue(pair.renewsBeforeUpload(now: now.addingTimeInterval(31)))
        XCTAssertFalse(pair.renewsEarly(now: now.addingTimeInterval(31)))
        XCTAssertFalse(Tokens.Pair(access: "a").renewsBeforeUpload(now: Date.distantFuture))
    }

    func testAnUploadLongerThanATokenLivesSaysHowLongTheServerLetsOneLive() {
        XCTAssertTrue(MatrixHTTP.outlives(lifetimeMilliseconds: 2_994).contains("after 3 seconds"))
        XCTAssertTrue(MatrixHTTP.outlives(lifetimeMilliseconds: 300_000).contains("after 5 minutes"))
        XCTAssertTrue(MatrixHTTP.outlives(lifetimeMilliseconds: 3_600_000).contains("after 60 minutes"))
    }

    func testRequestsRefusedForAnExpiredTokenShareOneRenewalKeptBeforeItsTokenIsUsed() async throws {
        let server = RefreshingServer()
        let tokens = Tokens(Tokens.Pair(access: "access-1", refresh: "refresh-1"))
        tokens.whenRenewed { pair in
            server.log("kept \(pair.access) \(pair.refresh ?? "-")")
            return true
        }
        let http = client(tokens, server)

        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<8 { group.addTask { _ = try await http.call(.GET, "/whoami", as: WhoAmI.self) } }
            try await group.waitForAll()
        }

        let log = server.entries
        XCTAssertEqual(log.filter { $0.hasPrefix("refresh ") }, ["refresh refresh-1"])
        let kept = try XCTUnwrap(log.firstIndex(of: "kept access-2 refresh-2"))
        let firstUse = try XCTUnwrap(log.firstIndex(of: "whoami access-2"))
        XCTAssertLessThan(kept, firstUse, "\(log)")
        XCTAssertEqual(log.filter { $0 == "whoami access-2" }.count, 8)
        XCTAssertEqual(tokens.pair.access, "access-2")
        XCTAssertEqual(tokens.pair.refresh, "refresh-2")
    }

    func testAPairThatCouldNotBeKeptIsNotUsedAndTheRequestIsTriedAgainLater() async throws {
        let server = RefreshingServer()
        let tokens = Tokens(Tokens.Pair(access: "access-1", refresh: "refresh-1"))
        tokens.whenRenewed { _ in false }

        let error = try await refusal(of: client(tokens, server))

        XCTAssertTrue(error.isTransient)
        XCTAssertFalse(error.isUnknownToken)
        XCTAssertEqual(tokens.pair.access, "access-1")
        XCTAssertFalse(server.entries.contains("whoami access-2"), "\(server.entries)")
    }

    func testARequestRefusedForATokenRenewedMeanwhileGoesAgainWithTheNewOne() async throws {
        // The server ends an old token as soon as it renews (the spec allows it): its refusal of a
        // request still on its way with that token says nothing of expiry (no soft_logout).
        let server = RefreshingServer(oldTokensHard: true)
        let tokens = Tokens(Tokens.Pair(access: "access-1", refresh: "refresh-1"))
        let http = client(tokens, server)
        server.whileAnswering { _ = try? await tokens.renew(replacing: "access-1", through: http) }

        _ = try await http.call(.GET, "/whoami", as: WhoAmI.self)

        XCTAssertEqual(server.entries, ["refresh refresh-1", "whoami access-2"])
    }

    func testATokenAboutToExpireIsRenewedBeforeTheRequest() async throws {
        let server = RefreshingServer()
        let tokens = Tokens(
            Tokens.Pair(
                access: "access-1", refresh: "refresh-1", expiresInMilliseconds: 60_000,
                now: Date().addingTimeInterval(-59)))
        let http = client(tokens, server)

        _ = try await http.call(.GET, "/whoami", as: WhoAmI.self)

        XCTAssertEqual(server.entries, ["refresh refresh-1", "whoami access-2"])
        XCTAssertNotNil(tokens.pair.expiresAt)
    }

    func testARefusedRenewalSignsOutAndLeavesTheTokensAsTheyWere() async throws {
        let server = RefreshingServer(refresh: (403, #"{"errcode":"M_FORBIDDEN","error":"spent"}"#))
        let tokens = Tokens(Tokens.Pair(access: "access-1", refresh: "refresh-1"))
        let http = client(tokens, server)

        let error = try await refusal(of: http)
        XCTAssertTrue(error.isUnknownToken)
        XCTAssertFalse(error.softLogout)
        XCTAssertTrue(error.message.contains("spent"), error.message)
        XCTAssertEqual(tokens.pair.access, "access-1")
    }

    func testARenewalTheServerCouldNotAnswerIsTriedAgainAtTheNextRequest() async throws {
        let server = RefreshingServer(refresh: (502, "{}"))
        let tokens = Tokens(Tokens.Pair(access: "access-1", refresh: "refresh-1"))
        let http = client(tokens, server)

        let error = try await refusal(of: http)
        XCTAssertTrue(error.isTransient)
        XCTAssertFalse(error.isUnknownToken)
        server.refreshAnswer = nil
        _ = try await http.call(.GET, "/whoami", as: WhoAmI.self)

        XCTAssertEqual(server.entries.filter { $0.hasPrefix("refresh ") }.count, 2)
        XCTAssertEqual(tokens.pair.access, "access-2")
    }

    func testASoftLogoutWithoutARefreshTokenIsASignOutAsBefore() async throws {
        let server = RefreshingServer()
        let http = client(Tokens(access: "access-1"), server)

        let error = try await refusal(of: http)
        XCTAssertTrue(error.isUnknownToken)
        XCTAssertFalse(server.entries.contains { $0.hasPrefix("refresh") })
    }
}

private struct WhoAmI: Decodable { var user_id: String }

/// The error a `/whoami` through `http` fails with; a test failure when it is answered.
private func refusal(of http: MatrixHTTP) async throws -> MatrixError {
    do {
        _ = try await http.call(.GET, "/whoami", as: WhoAmI.self)
    } catch {
        return error
    }
    throw Answered()
}

/// Thrown (a test failure) when a request that should have been refused was answered.
private struct Answered: Error {}

private func client(_ tokens: Tokens, _ server: RefreshingServer) -> MatrixHTTP {
    MatrixHTTP(
        session: Session(userID: "@a:x", homeserver: "http://127.0.0.1:1", deviceID: "D", tokens: tokens),
        responder: server.responder)
}

/// A homeserver that takes `access-N` only for the newest N after the first (`access-1` has
/// expired), answers the rest with the spec's soft-logout 401, and renews `refresh-N` into the
/// pair N+1 (or answers `refresh` instead).
private final class RefreshingServer: Sendable {
    private let state = NIOLockedValueBox<(log: [String], generation: Int, refresh: (Int, String)?)>(([], 1, nil))
    private let oldTokensHard: Bool
    /// Run once, while the first request other than a renewal is on its way.
    private let midRequest = NIOLockedValueBox<(@Sendable () async -> Void)?>(nil)

    init(refresh: (Int, String)? = nil, oldTokensHard: Bool = false) {
        self.oldTokensHard = oldTokensHard
        state.withLockedValue { $0.refresh = refresh }
    }

    func whileAnswering(_ action: @escaping @Sendable () async -> Void) { midRequest.withLockedValue { $0 = action } }

    var entries: [String] { state.withLockedValue { $0.log } }
    var refreshAnswer: (Int, String)? {
        get { state.withLockedValue { $0.refresh } }
        set { state.withLockedValue { $0.refresh = newValue } }
    }

    func log(_ line: String) { state.withLockedValue { $0.log.append(line) } }

    var responder: MatrixHTTP.Responder {
        { [self] exchange in
            // Other requests go on while a renewal is out, as on a server.
            await Task.yield()
            if exchange.path != "/_matrix/client/v3/refresh", let action = midRequest.withLockedValue({ $0.take() }) {
                await action()
            }
            return state.withLockedValue { state in
                if exchange.path == "/_matrix/client/v3/refresh" {
                    let body = (try? JSONSerialization.jsonObject(with: exchange.body ?? Data())) as? [String: Any]
                    let refresh = body?["refresh_token"] as? String ?? "-"
                    state.log.append("refresh \(refresh)")
                    if let (status, answer) = state.refresh { return (status, Data(answer.utf8)) }
                    guard refresh == "refresh-\(state.generation)", exchange.bearer == nil else {
                        return (401, Data(#"{"errcode":"M_UNKNOWN_TOKEN","error":"unknown refresh token"}"#.utf8))
                    }
                    state.generation += 1
                    let next = state.generation
                    let pair = #"{"access_token":"access-\#(next)","refresh_token":"refresh-\#(next)","#
                    return (200, Data((pair + #""expires_in_ms":300000}"#).utf8))
                }
                guard state.generation > 1, exchange.bearer == "access-\(state.generation)" else {
                    if oldTokensHard, state.generation > 1 {
                        return (401, Data(#"{"errcode":"M_UNKNOWN_TOKEN","error":"ended"}"#.utf8))
                    }
                    return (401, Data(#"{"errcode":"M_UNKNOWN_TOKEN","error":"expired","soft_logout":true}"#.utf8))
                }
                state.log.append("whoami \(exchange.bearer ?? "-")")
                return (200, Data(#"{"user_id":"@a:x"}"#.utf8))
            }
        }
    }
}
