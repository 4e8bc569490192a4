#if Server
import CodableSync
import Foundation
import Hummingbird

@available(macOS 14, iOS 17, tvOS 17, visionOS 1, *)
extension RouterMethods {
    /// Serves sync over HTTP on this router: ``SyncHTTPEndpoint``'s routes under `path`
    /// (`POST /sync/push`, `POST /sync/pull`, `POST /sync/wait`, `POST /sync/share`,
    /// `POST /sync/unshare`, `GET /sync/account`), each request's account named by its bearer
    /// token.
    ///
    /// ```swift
    /// let syncServer = try Postgres.SyncServer(database: postgres, models: [Note.self, Folder.self])
    /// let router = Router()
    /// router.addSyncRoutes(SyncHTTPEndpoint(server: syncServer))
    /// try await Application(router: router, configuration: .init(address: .hostname("0.0.0.0", port: 8080))).runService()
    /// ```
    ///
    /// A body over ``SyncHTTPEndpoint/maximumBodySize`` is refused (413) before it is read whole.
    @discardableResult
    public func addSyncRoutes(_ endpoint: SyncHTTPEndpoint, at path: String = "sync") -> Self {
        for route in SyncHTTPEndpoint.Route.allCases {
            on(RouterPath("\(path)/\(route)"), method: route.method == "GET" ? .get : .post) { request, _ -> Response in
                var request = request
                let body = try await request.collectBody(upTo: SyncHTTPEndpoint.maximumBodySize)
                let answer = await endpoint.respond(to: route, authorization: request.headers[.authorization], body: Data(body.readableBytesView))
                return Response(
                    status: HTTPResponse.Status(code: answer.status), headers: [.contentType: answer.contentType],
                    body: ResponseBody(byteBuffer: ByteBuffer(bytes: answer.body)))
            }
        }
        return self
    }
}
#endif
