import FerryCore
import Foundation

/// People's and rooms' pictures, as the server scales them.
public struct Avatars: Sendable {
    let http: MatrixHTTP

    public init(http: MatrixHTTP) { self.http = http }

    /// The largest answer taken for an avatar: a server that sends more is not sending a small
    /// picture.
    public static let largestThumbnail = 2 << 20

    /// A `size` × `size` thumbnail of `uri`, cropped square, through authenticated media
    /// (`/_matrix/client/v1/media/thumbnail`, Matrix 1.11).
    public func thumbnail(of uri: MediaURI, size: Int) async throws(MatrixError) -> Data {
        let media = "\(MatrixHTTP.percentEncoded(uri.server))/\(MatrixHTTP.percentEncoded(uri.mediaID))"
        let query = [("width", "\(size)"), ("height", "\(size)"), ("method", "crop")]
        do {
            return try await http.bytes(
                "/_matrix/client/v1/media/thumbnail/" + media, query: query, timeout: .seconds(20),
                limit: Self.largestThumbnail)
        } catch let error where Self.unrecognized(error) {
            // A server older than Matrix 1.11 has only the unauthenticated media endpoints.
            return try await http.bytes(
                "/_matrix/media/v3/thumbnail/" + media, query: query, timeout: .seconds(20),
                limit: Self.largestThumbnail)
        }
    }

    /// Whether the server does not know the endpoint (not: does not have the picture).
    static func unrecognized(_ error: MatrixError) -> Bool {
        error.errcode == "M_UNRECOGNIZED" || ((error.status == 404 || error.status == 400) && error.errcode == nil)
    }

    /// The person's own picture from their profile; nil when they have none.
    public func profileAvatar(of userID: String) async throws(MatrixError) -> MediaURI? {
        struct Answer: Decodable { var avatar_url: String? }
        do {
            let answer = try await http.call(
                .GET, "/_matrix/client/v3/profile/\(MatrixHTTP.percentEncoded(userID))/avatar_url", as: Answer.self)
            return answer.avatar_url.flatMap(MediaURI.init)
        } catch {
            // No picture is M_NOT_FOUND on some servers.
            if error.errcode == "M_NOT_FOUND" { return nil }
            throw error
        }
    }
}
