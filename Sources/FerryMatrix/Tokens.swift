import FerryCore
import Foundation
import NIOConcurrencyHelpers

/// The tokens of one sign-in, shared by every copy of its `Session` and every client made from
/// it: the access token requests carry and, where the server gave one (Matrix 1.3), the refresh
/// token that renews it when it expires.
///
/// A renewal is one request for everyone who needs it at that moment, and its new pair is handed
/// to `whenRenewed`'s keeper (the Secret Service) before the new access token is used for
/// anything. That order is what a crash needs: Synapse accepts a spent refresh token again until
/// the access token it was exchanged for has been used, so a kill between the server's answer and
/// the keeping leaves the stored pair still good; a kill after the keeping leaves the new one.
public final class Tokens: Sendable {
    /// An access token, and what renews it.
    public struct Pair: Sendable, Equatable {
        public var access: String
        public var refresh: String?
        /// When the access token expires, on the wall clock (the pair is kept across restarts).
        public var expiresAt: Date?
        /// How long the server gave it, for how early to renew it (`renewsEarly`).
        public var lifetimeMilliseconds: Int64?
        /// Where a sign-in through the OAuth 2.0 API is renewed and ended; nil for Matrix's own
        /// sign-in (renewed at `/refresh`, ended at `/logout`).
        public var oauth: OAuthGrant?

        public init(access: String, refresh: String? = nil, expiresInMilliseconds: Int64? = nil, now: Date = Date()) {
            self.access = access
            self.refresh = refresh
            // A lifetime that is no number of milliseconds a token could live means "no expiry known":
            // the token is then renewed when the server says it expired.
            let lifetime = expiresInMilliseconds.flatMap { (1...(366 * 86_400_000)).contains($0) ? $0 : nil }
            lifetimeMilliseconds = lifetime
            expiresAt = lifetime.map { now.addingTimeInterval(Double($0) / 1000) }
        }

        /// Renewed before a request when it would expire within a tenth of its lifetime (at most
        /// 30 s): a request (an upload's body above all) is not spent on a token about to be refused.
        func renewsEarly(now: Date) -> Bool {
            guard refresh != nil, let expiresAt, let lifetimeMilliseconds else { return false }
            let margin = min(30, Double(lifetimeMilliseconds) / 10_000)
            return now >= expiresAt.addingTimeInterval(-margin)
        }

        /// Renewed before an upload once a tenth of its lifetime has passed: Synapse checks the
        /// token when the whole body has arrived, so an upload gets all the time a token has.
        func renewsBeforeUpload(now: Date) -> Bool {
            guard refresh != nil, let expiresAt, let lifetimeMilliseconds else { return false }
            return now >= expiresAt.addingTimeInterval(-0.9 * Double(lifetimeMilliseconds) / 1000)
        }
    }

    private struct State: Sendable {
        var pair: Pair
        var renewal: Task<Result<Void, MatrixError>, Never>?
        var keeper: (@Sendable (Pair) -> Bool)?
        /// The sign-in is being ended (`forEnding`): no renewal starts any more.
        var ending = false
    }

    /// A pthread mutex (NIO's) rather than Synchronization's Mutex: ThreadSanitizer sees this one's
    /// ordering, and `make tsan-tests` runs the concurrent renewals.
    private let state: NIOLockedValueBox<State>

    public init(_ pair: Pair) { state = NIOLockedValueBox(State(pair: pair)) }

    public convenience init(access: String) { self.init(Pair(access: access)) }

    /// The access token to send now.
    public var access: String { state.withLockedValue { $0.pair.access } }
    public var pair: Pair { state.withLockedValue { $0.pair } }

    /// `keeper` is given each renewed pair before it is used, and says whether it kept it. A pair
    /// it could not keep is not used: the renewal fails (tried again later), and the spent refresh
    /// token stays good while the new access token is unused, so the kept pair keeps working.
    public func whenRenewed(_ keeper: @escaping @Sendable (Pair) -> Bool) {
        state.withLockedValue { $0.keeper = keeper }
    }

    /// The access token to send a request with: renewed first when it is about to expire.
    func forRequest(
        through http: MatrixHTTP, upload: Bool = false, now: Date = Date()
    ) async throws(MatrixError) -> String {
        let pair = self.pair
        guard upload ? pair.renewsBeforeUpload(now: now) : pair.renewsEarly(now: now) else { return pair.access }
        _ = try await renew(replacing: pair.access, through: http)
        return access
    }

    /// Renews the access token `spent` (expired, or refused with `soft_logout`). Returns whether a
    /// newer access token is there to try; false when this sign-in has no refresh token. Throws
    /// when the renewal fails: a refusal as `M_UNKNOWN_TOKEN` without `soft_logout` (signed out),
    /// anything else as it came (the network, the server: tried again later).
    func renew(replacing spent: String, through http: MatrixHTTP) async throws(MatrixError) -> Bool {
        let renewal: Task<Result<Void, MatrixError>, Never>? = state.withLockedValue { state in
            guard !state.ending, state.pair.access == spent, let refresh = state.pair.refresh else { return nil }
            if let running = state.renewal { return running }
            let started = Task { await self.exchange(refresh, through: http) }
            state.renewal = started
            return started
        }
        guard let renewal else { return access != spent }
        try await renewal.value.get()
        return true
    }

    private func exchange(_ refresh: String, through http: MatrixHTTP) async -> Result<Void, MatrixError> {
        let renewed: Pair
        do {
            if let grant = pair.oauth {
                renewed = try await Self.renewal(of: refresh, at: grant, through: http)
            } else {
                renewed = try await Self.renewal(of: refresh, through: http)
            }
        } catch {
            state.withLockedValue { $0.renewal = nil }
            return .failure(Self.refusal(error))
        }
        let keeper = state.withLockedValue { $0.keeper }
        if let keeper, !keeper(renewed) {
            state.withLockedValue { $0.renewal = nil }
            return .failure(
                MatrixError(
                    kind: .renewed,
                    // TRANSLATORS: why something was not sent yet, completing "Sending to {room} failed: {reason}.";
                    // Ferry tries again later.
                    message: tr("the renewed sign-in could not be kept on this computer")))
        }
        state.withLockedValue {
            $0.pair = renewed
            $0.renewal = nil
        }
        return .success(())
    }

    /// The pair to end an OAuth sign-in with, once nothing renews it any more: a renewal under
    /// way is waited for, no other starts, and the pair is renewed once more without being kept
    /// (it is revoked next). The kept refresh token may be one the server rotated already (a kill
    /// between its answer and the keeping): the Matrix Authentication Service answers a
    /// revocation of a spent token with 200 and ends nothing, but takes it again for a renewal
    /// while its successor is unused. A renewal that fails leaves the pair as it was.
    func forEnding(through http: MatrixHTTP) async -> Pair {
        let running = state.withLockedValue { state in
            state.ending = true
            return state.renewal
        }
        _ = await running?.value
        let pair = self.pair
        guard let grant = pair.oauth, let refresh = pair.refresh,
            let renewed = try? await Self.renewal(of: refresh, at: grant, through: http)
        else { return pair }
        state.withLockedValue { $0.pair = renewed }
        return renewed
    }

    /// Matrix's own renewal (`POST /refresh`, Matrix 1.3).
    private static func renewal(of refresh: String, through http: MatrixHTTP) async throws(MatrixError) -> Pair {
        struct Body: Encodable { var refresh_token: String }
        struct Answer: Decodable {
            var access_token: String
            var refresh_token: String?
            var expires_in_ms: LenientNumber?
        }
        let answer: Answer = try await http.with(accessToken: nil).call(
            .POST, "/_matrix/client/v3/refresh", json: Body(refresh_token: refresh), timeout: .seconds(30))
        // Without a new refresh token the old one stays good (spec: "Refresh access token").
        return Pair(
            access: answer.access_token, refresh: answer.refresh_token ?? refresh,
            expiresInMilliseconds: answer.expires_in_ms.flatMap(Self.milliseconds))
    }

    /// The OAuth 2.0 renewal: the refresh token grant at the authorization server's token
    /// endpoint (RFC 6749 §6), which rotates the refresh token.
    private static func renewal(
        of refresh: String, at grant: OAuthGrant, through http: MatrixHTTP
    ) async throws(MatrixError) -> Pair {
        let answer = try await http.to(grant.tokenEndpoint).postForm(
            [("grant_type", "refresh_token"), ("refresh_token", refresh), ("client_id", grant.clientID)],
            as: TokenAnswer.self)
        return try answer.pair(grant: grant, keeping: refresh)
    }

    /// A lifetime as the server wrote it, when it is a number of milliseconds at all.
    package static func milliseconds(_ number: LenientNumber) -> Int64? {
        guard let value = number.value, value.isFinite, value >= 1, value < 1e13 else { return nil }
        return Int64(value)
    }

    /// A renewal the server refused (the refresh token unknown, spent or revoked) signs out; a
    /// network failure, a rate limit or a server error is tried again later.
    static func refusal(_ error: MatrixError) -> MatrixError {
        guard !error.isTransient, error.status != nil else { return error }
        return MatrixError(
            kind: .http(status: 401), errcode: "M_UNKNOWN_TOKEN",
            // TRANSLATORS: why a person must sign in again; {reason} is the homeserver's own words, often in English.
            message: tr("the homeserver did not renew the sign-in: {reason}", ["reason": error.description]))
    }

    /// The form the pair is kept in (the Secret Service or a private file): the access token alone
    /// when there is nothing else, as Ferry always kept it; JSON otherwise.
    public var kept: String { Self.kept(pair) }

    public static func kept(_ pair: Pair) -> String {
        guard pair.refresh != nil || pair.oauth != nil else { return pair.access }
        var object: [String: Any] = ["access_token": pair.access]
        if let refresh = pair.refresh { object["refresh_token"] = refresh }
        if let grant = pair.oauth, let data = try? JSONEncoder().encode(grant) {
            object["oauth"] = try? JSONSerialization.jsonObject(with: data)
        }
        if let expiresAt = pair.expiresAt {
            object["expires_at_ms"] = Int64(expiresAt.timeIntervalSince1970 * 1000)
        }
        if let lifetime = pair.lifetimeMilliseconds { object["lifetime_ms"] = lifetime }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    /// The pair as `kept` wrote it; nil when it is neither a token nor that JSON.
    public static func fromKept(_ text: String) -> Pair? {
        guard text.hasPrefix("{") else { return text.isEmpty ? nil : Pair(access: text) }
        guard let object = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any],
            let access = object["access_token"] as? String
        else { return nil }
        var pair = Pair(access: access, refresh: object["refresh_token"] as? String)
        pair.lifetimeMilliseconds = (object["lifetime_ms"] as? NSNumber)?.int64Value
        pair.expiresAt = (object["expires_at_ms"] as? NSNumber).map {
            Date(timeIntervalSince1970: $0.doubleValue / 1000)
        }
        if let grant = object["oauth"] {
            // A grant that does not read back is a sign-in that cannot be renewed: not one at all.
            guard let data = try? JSONSerialization.data(withJSONObject: grant),
                let decoded = try? JSONDecoder().decode(OAuthGrant.self, from: data)
            else { return nil }
            pair.oauth = decoded
        }
        return pair
    }
}
