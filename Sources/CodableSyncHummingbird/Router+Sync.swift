#if Server
import CodableSyncServer
import Foundation
import Hummingbird
import HummingbirdCore

@available(macOS 14, iOS 17, tvOS 17, visionOS 1, *)
extension RouterMethods {
    /// Serves sync over HTTP on this router: ``SyncHTTPEndpoint``'s routes under `path`
    /// (`POST /sync/push`, `POST /sync/pull`, `POST /sync/wait`, `POST /sync/share`,
    /// `POST /sync/unshare`, `GET /sync/account`, `GET /sync/offers`, `POST /sync/accept`,
    /// `POST /sync/decline`), each request's account named by its bearer
    /// token; live pushes at `GET /sync/events` (server-sent events,
    /// ``SyncHTTPEndpoint/events(authorization:after:)``), and the protocol's OpenAPI document at
    /// `GET /sync/openapi.yaml` (no token). Serve it with ``HTTPServerBuilder/syncHTTP1`` for the timeouts a server facing the
    /// internet needs:
    ///
    /// ```swift
    /// let syncServer = try Postgres.SyncServer(database: postgres, models: [Note.self, Folder.self])
    /// let router = Router()
    /// router.addSyncRoutes(SyncHTTPEndpoint(server: syncServer))
    /// try await Application(router: router, server: .syncHTTP1, configuration: .init(address: .hostname("0.0.0.0", port: 8080))).runService()
    /// ```
    ///
    /// The token is checked from the header before any of the body is read; a body is then read
    /// up to the endpoint's limit (413 past it) within its time (408 past it), streamed, never
    /// buffered whole beyond the limit.
    @discardableResult
    public func addSyncRoutes(_ endpoint: SyncHTTPEndpoint, at path: String = "sync") -> Self {
        for route in SyncHTTP.Route.allCases {
            on(RouterPath("\(path)/\(route)"), method: route.method == "GET" ? .get : .post) { request, _ -> Response in
                let body = request.body
                let answer = await endpoint.respond(to: route, authorization: request.headers[.authorization]) { limit in
                    do {
                        return Data(try await body.collect(upTo: limit).readableBytesView)
                    } catch let error as any HTTPResponseError where error.status == .contentTooLarge {
                        // Over the limit: refused, having read no more than it.
                        throw SyncHTTPEndpoint.BodyTooLarge()
                    }
                }
                var headers: HTTPFields = [.contentType: answer.contentType]
                // A refused body may be unread: the connection cannot carry another request.
                if [408, 413].contains(answer.status) { headers[.connection] = "close" }
                return Response(status: HTTPResponse.Status(code: answer.status), headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: answer.body)))
            }
        }
        // Live pushes: server-sent events until the client goes.
        on(RouterPath("\(path)/events"), method: .get) { request, _ -> Response in
            let after = request.uri.queryParameters["after"].map(String.init)
            switch await endpoint.events(authorization: request.headers[.authorization], after: after) {
            case .refused(let answer):
                return Response(
                    status: HTTPResponse.Status(code: answer.status), headers: [.contentType: answer.contentType],
                    body: ResponseBody(byteBuffer: ByteBuffer(bytes: answer.body)))
            case .stream(let chunks):
                return Response(
                    status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "no-store"],
                    body: ResponseBody(asyncSequence: chunks.map { ByteBuffer(bytes: $0) }))
            }
        }
        // The protocol's description, for anyone (it holds no secret).
        on(RouterPath("\(path)/openapi.yaml"), method: .get) { _, _ -> Response in
            Response(
                status: .ok, headers: [.contentType: "application/yaml"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: SyncHTTPEndpoint.openAPIDocument)))
        }
        return self
    }
}

@available(macOS 14, iOS 17, tvOS 17, visionOS 1, *)
extension HTTPServerBuilder {
    /// HTTP/1.1 for a sync server facing the internet: a connection that sends nothing for 30
    /// seconds while its request is incomplete, or between requests, is closed (a long poll
    /// that waits for the server's answer is not idle). Headers are limited to 80 KiB.
    ///
    /// ```swift
    /// let app = Application(router: router, server: .syncHTTP1, configuration: .init(address: .hostname("0.0.0.0", port: 8080)))
    /// ```
    public static var syncHTTP1: HTTPServerBuilder {
        .http1(configuration: .init(idleTimeout: .seconds(30)))
    }
}
#endif
