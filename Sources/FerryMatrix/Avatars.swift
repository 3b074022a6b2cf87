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
        let path =
            "/_matrix/client/v1/media/thumbnail/\(MatrixHTTP.percentEncoded(uri.server))/"
            + MatrixHTTP.percentEncoded(uri.mediaID)
        return try await http.bytes(
            path, query: [("width", "\(size)"), ("height", "\(size)"), ("method", "crop")], timeout: .seconds(20),
            limit: Self.largestThumbnail)
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
