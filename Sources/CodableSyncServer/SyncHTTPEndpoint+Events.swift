#if Postgres
import CodablePostgres
import CodableSyncProtocol
import Foundation

extension SyncHTTPEndpoint {
    /// The answer to `GET /sync/events`: refused (its status and JSON body, as any route's), or
    /// a stream of server-sent events to write as the body (`text/event-stream`) until the
    /// client goes.
    ///
    /// Sendable: a response or a stream.
    public enum Events: Sendable {
        case refused(Response)
        /// The body's chunks, each a whole event (or a keep-alive comment). Ending the iteration
        /// (the client went away) ends the server's work for it.
        case stream(AsyncStream<Data>)
    }

    /// Live pushes: `GET /sync/events?after=VERSION` (the version the device pulled last) keeps
    /// one response open and sends an event each time the account may have news after the
    /// version it was told last:
    ///
    /// ```
    /// event: changed
    /// data: {"version":1234}
    ///
    /// ```
    ///
    /// upon which the device pulls; a comment line (`: keep-alive`) every 20 to 30 s otherwise (a
    /// keep-alive costs no query). One
    /// listening connection serves every stream (``SyncHTTP/Route/wait``'s), so an idle device costs the
    /// server a socket and a task, no thread and no database connection. Streams count as long
    /// polls toward ``Limits/waitsPerAccount``. Long polling (``SyncHTTP/Route/wait``) stays for clients
    /// and proxies that cannot keep a response open.
    ///
    /// ```swift
    /// switch await endpoint.events(authorization: request.headers["Authorization"], after: request.query["after"]) {
    /// case .refused(let answer): return Response(status: answer.status, body: answer.body)
    /// case .stream(let chunks): return Response(status: 200, contentType: "text/event-stream", body: chunks)
    /// }
    /// ```
    public func events(authorization: String?, after: String?) async -> Events {
        let account: SyncAccount
        do {
            account = try await self.account(authorization)
        } catch {
            return .refused(Self.failure(error))
        }
        let text = after ?? "0"
        guard text.utf8.count <= 20, let start = Int64(text), start >= 0 else {
            return .refused(Self.failure(SyncError(.invalidArgument, "events' version (after) is a whole number, 0 or more, not '\(after ?? "")'")))
        }
        let key = RunningKey(account: account.name, kind: 1)
        let cap = limits.waitsPerAccount
        guard admit(key, cap: cap) else {
            return .refused(Self.failure(HTTPRefusal(
                status: 429, code: "tooManyRequests",
                message: "\(account.name) has \(cap) long polls or event streams open already; close one first")))
        }
        let (stream, continuation) = AsyncStream<Data>.makeStream(bufferingPolicy: .bufferingNewest(4))
        let server = server, signals = signals
        let work = Task {
            defer {
                release(key)
                continuation.finish()
            }
            // The headers go at once, with a first line: the client knows it is listening.
            continuation.yield(Data(": listening\n\n".utf8))
            var told = start
            // The last check's signal count: a keep-alive is no reason to query again.
            var checked: Int?
            while !Task.isCancelled {
                do {
                    let since = told
                    // 20 to 30 s: streams opened together do not all wake together.
                    let changed = try await signals.wait(
                        timeout: .milliseconds(Int.random(in: 20_000...30_000)), account: account.name, checked: &checked
                    ) {
                        try await server.hasChanges(after: since, for: account)
                    }
                    guard changed else {
                        continuation.yield(Data(": keep-alive\n\n".utf8))
                        continue
                    }
                    // The newest version now: the device's pull after this event sees up to it
                    // at least, so news up to it is told once.
                    told = max(told, try await server.newestVersion())
                    continuation.yield(Data("event: changed\ndata: {\"version\":\(told)}\n\n".utf8))
                } catch {
                    // The database is unreachable: the stream ends, the device falls back to
                    // polling and opens another.
                    return
                }
            }
        }
        continuation.onTermination = { _ in work.cancel() }
        return .stream(stream)
    }
}
#endif
