#if Postgres
import CodablePostgres
import CodableSyncProtocol
import Foundation

/// The sync server's HTTP API, for any HTTP framework: each route takes the request's
/// `Authorization` header and body, and gives a status and a JSON body. `CodableSyncHummingbird`
/// mounts it on a Hummingbird router; on Vapor (or anything else), a route per
/// ``SyncHTTP/Route`` calls ``respond(to:authorization:readBody:)``:
///
/// ```swift
/// let endpoint = SyncHTTPEndpoint(server: syncServer)   // tokens checked by the server's accounts
/// for route in SyncHTTP.Route.allCases {
///     app.on(route.method == "GET" ? .GET : .POST, "sync", "\(route)", body: .stream) { request async in
///         let answer = await endpoint.respond(to: route, authorization: request.headers.first(name: "Authorization")) { limit in
///             Data(buffer: try await request.body.collect(max: limit).get() ?? ByteBuffer())
///         }
///         return Response(status: .init(statusCode: answer.status), body: .init(data: answer.body))
///     }
/// }
/// ```
///
/// Every request names its account by a bearer token (`Authorization: Bearer <token>`), checked
/// by the hook given (by default the server's own accounts, ``Postgres/SyncServer/authenticate(token:)``);
/// the body never does. The token is checked before the body is read, so a client without one
/// costs the server its headers only. Errors are `{"error": code, "message": …}` with 400 (a
/// malformed request), 401 (no valid token), 403 (not the account's to do), 408 (the body came
/// too slowly), 409 (the device must start over), 413 (the body is too large), 429 (the account
/// has too many requests under way, ``Limits``), 503 (the database is unreachable or busy: try
/// again) or 500.
///
/// Sendable: immutable, apart from lock-guarded counts of requests under way and the waiters of
/// ``SyncHTTP/Route/wait``.
public final class SyncHTTPEndpoint: Sendable {
    /// The routes (``SyncHTTP/Route``), as this file names them.
    package typealias Route = SyncHTTP.Route

    /// An HTTP answer: its status and its JSON body.
    public struct Response: Sendable {
        public let status: Int
        public let body: Data
        public var contentType: String { "application/json" }
    }


    package let server: Postgres.SyncServer
    private let authenticate: @Sendable (String) async throws -> SyncAccount?
    let signals: CommitSignals
    /// Requests under way per account and route, for ``limits``.
    private let running = Locked<[RunningKey: Int]>([:])
    /// The caps this endpoint enforces.
    package let limits: Limits
    /// Whether ``SyncHTTP/Route/share`` offers the share (``Postgres/SyncServer/offerShare(_:with:access:by:)``),
    /// which reaches the other account only once it accepts (``SyncHTTP/Route/accept``), rather than
    /// sharing at once. `false` by default: see ``Postgres/SyncServer/share(_:with:access:by:)``
    /// for what protects an account from unwanted shares then.
    package let sharesNeedAcceptance: Bool

    /// The sync protocol's OpenAPI 3.1 document (YAML): every route, body, answer and error, for
    /// clients in any language. `addSyncRoutes` serves it, without a token, at
    /// `GET /sync/openapi.yaml`; it is `Sources/CodableSyncServer/openapi.yaml` in the repository.
    ///
    /// ```swift
    /// router.get("sync/openapi.yaml") { _, _ in String(decoding: SyncHTTPEndpoint.openAPIDocument, as: UTF8.self) }
    /// ```
    public static let openAPIDocument = Data(PackageResources.openapi_yaml)

    /// The largest body taken (64 MiB), read only once the request's token is accepted: a push
    /// of ``SyncPush/maximumChanges`` changes of ordinary values fits many times. A device's
    /// batch of changes must fit in it (its default batch of 500 changes leaves each 128 KiB).
    package static let maximumBodySize = 64 << 20

    /// What one account may have under way at once, and how long a request may take to send its
    /// body: beyond them a request is refused (429, `tooManyRequests`; 408, `requestTimeout`)
    /// before it costs the server more than its headers.
    ///
    /// ```swift
    /// let endpoint = SyncHTTPEndpoint(server: syncServer, limits: .init(pushesPerAccount: 4))
    /// ```
    ///
    /// Sendable: plain values.
    public struct Limits: Sendable, Hashable {
        /// Pushes of one account being applied at once (2): pushes of an account are applied one
        /// after the other anyway (the log's lock), so more would only hold connections.
        public var pushesPerAccount: Int
        /// Long polls (``SyncHTTP/Route/wait``) of one account waiting at once (32): a device has one.
        public var waitsPerAccount: Int
        /// Other requests (pulls, shares) of one account under way at once (8).
        public var requestsPerAccount: Int
        /// How long a request's body may take to arrive once its headers are read (30 s).
        public var bodyTimeout: Duration
        /// The largest body taken (64 MiB, the most the endpoint takes, by default).
        public var maximumBodySize: Int

        public init(
            pushesPerAccount: Int = 2, waitsPerAccount: Int = 32, requestsPerAccount: Int = 8, bodyTimeout: Duration = .seconds(30),
            maximumBodySize: Int = 64 << 20
        ) {
            self.pushesPerAccount = max(pushesPerAccount, 1)
            self.waitsPerAccount = max(waitsPerAccount, 1)
            self.requestsPerAccount = max(requestsPerAccount, 1)
            self.bodyTimeout = bodyTimeout
            self.maximumBodySize = min(max(maximumBodySize, 1024), SyncHTTPEndpoint.maximumBodySize)
        }
    }

    struct RunningKey: Hashable {
        let account: String
        let kind: Int
    }

    /// What a `readBody` closure throws when the body is over the limit it was given (answered
    /// 413): see ``respond(to:authorization:readBody:)``.
    ///
    /// ```swift
    /// guard received.count <= limit else { throw SyncHTTPEndpoint.BodyTooLarge() }
    /// ```
    ///
    /// Sendable: no state.
    public struct BodyTooLarge: Swift.Error, Sendable {
        public init() {}
    }

    /// A refusal of the HTTP layer itself: its status, code and message.
    struct HTTPRefusal: Swift.Error {
        let status: Int
        let code: String
        let message: String

        /// The body was over the limit (413).
        static func bodyTooLarge(_ limit: Int) -> HTTPRefusal {
            HTTPRefusal(status: 413, code: "bodyTooLarge", message: "the request's body is over \(limit) bytes")
        }
    }

    /// - Parameters:
    ///   - authenticate: the account of a bearer token, `nil` for a token it refuses (answered
    ///     401; or throw `SyncError.Code.unauthorized` to say why). Any other error it
    ///     throws is the server's failure (500, or 503 for a lost database). Defaults to the
    ///     server's accounts (``Postgres/SyncServer/addAccount(_:tokenLifetime:)``).
    ///   - limits: what one account may have under way at once (``Limits``).
    ///   - sharesNeedAcceptance: whether a share reaches the other account only once it accepts.
    public init(
        server: Postgres.SyncServer, limits: Limits = Limits(), sharesNeedAcceptance: Bool = false,
        authenticate: (@Sendable (_ bearerToken: String) async throws -> SyncAccount?)? = nil
    ) {
        self.server = server
        self.limits = limits
        self.sharesNeedAcceptance = sharesNeedAcceptance
        self.authenticate = authenticate ?? { token in try await server.authenticate(token: token) }
        signals = CommitSignals(server: server)
    }

    /// Answers one request of `route` whose body is read already. An HTTP server should prefer
    /// ``respond(to:authorization:readBody:)``, which reads the body only once the token is
    /// accepted.
    package func respond(to route: Route, authorization: String?, body: Data) async -> Response {
        await respond(to: route, authorization: authorization) { _ in body }
    }

    /// Answers one request of `route`: checks the bearer token from the header first, then the
    /// account's requests under way (``Limits``), and only then reads the body with `readBody`
    /// (given the most bytes to take: it should stop reading past them, and throw or return
    /// more to have the request refused with 413). Nobody without a valid token makes the server
    /// read, buffer or parse a body.
    ///
    /// ```swift
    /// let answer = await endpoint.respond(to: .push, authorization: request.headers["Authorization"]) { limit in
    ///     try await request.body.collect(upTo: limit)
    /// }
    /// ```
    public func respond(to route: SyncHTTP.Route, authorization: String?, readBody: @escaping @Sendable (_ limit: Int) async throws -> Data) async -> Response {
        let account: SyncAccount
        do {
            account = try await self.account(authorization)
        } catch {
            return Self.failure(error)
        }
        let key = RunningKey(account: account.name, kind: route == .push ? 0 : route == .wait ? 1 : 2)
        let cap = route == .push ? limits.pushesPerAccount : route == .wait ? limits.waitsPerAccount : limits.requestsPerAccount
        guard admit(key, cap: cap) else {
            return Self.failure(HTTPRefusal(
                status: 429, code: "tooManyRequests",
                message: "\(account.name) has \(cap) /\(route) request\(cap == 1 ? "" : "s") under way already; try again when one has ended"))
        }
        defer { release(key) }
        do {
            let body = try await Self.read(readBody, limit: limits.maximumBodySize, timeout: limits.bodyTimeout)
            return try await answer(route, body: body, account: account)
        } catch {
            if let error = error as? SyncError, error.code == .forbidden {
                SyncAudit.record("forbidden", "\(account.name) was refused /\(route): \(error.message)", ["account": account.name])
            }
            return Self.failure(error)
        }
    }

    /// Counts a request of `key` as under way, unless `cap` are already: `false` then.
    func admit(_ key: RunningKey, cap: Int) -> Bool {
        running.withLock { running -> Bool in
            guard running[key, default: 0] < cap else { return false }
            running[key, default: 0] += 1
            return true
        }
    }

    /// A request of `key` has ended.
    func release(_ key: RunningKey) {
        running.withLock { running in
            running[key, default: 1] -= 1
            if running[key] == 0 { running[key] = nil }
        }
    }

    /// The account of the `Authorization` header's bearer token; refusals are audited.
    func account(_ authorization: String?) async throws -> SyncAccount {
        guard let header = authorization, header.count <= 4096, header.lowercased().hasPrefix("bearer "),
              case let token = header.dropFirst(7).trimmingCharacters(in: .whitespaces), !token.isEmpty else {
            throw SyncError(.unauthorized, "the request has no bearer token (Authorization: Bearer <token>)")
        }
        guard let account = try await authenticate(token) else {
            SyncAudit.record("authenticationFailed", "a request's token was refused by the authentication hook")
            throw SyncError(.unauthorized, "the token was refused")
        }
        return account
    }

    /// The body, read with `readBody` within `timeout` and `limit` bytes.
    private static func read(_ readBody: @escaping @Sendable (Int) async throws -> Data, limit: Int, timeout: Duration) async throws -> Data {
        let body = try await withThrowingTaskGroup(of: Data?.self) { group in
            group.addTask {
                do {
                    return try await readBody(limit)
                } catch is BodyTooLarge {
                    throw HTTPRefusal.bodyTooLarge(limit)
                } catch is CancellationError {
                    throw CancellationError()
                } catch {
                    throw HTTPRefusal(status: 400, code: "invalidArgument", message: "the request's body could not be read: \(error)")
                }
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let body = first else {
                throw HTTPRefusal(status: 408, code: "requestTimeout", message: "the request's body did not arrive within \(timeout)")
            }
            return body
        }
        guard body.count <= limit else { throw HTTPRefusal.bodyTooLarge(limit) }
        return body
    }

    /// The answer to a request of `account` whose body is read.
    private func answer(_ route: Route, body: Data, account: SyncAccount) async throws -> Response {
        switch route {
        case .push:
            let answer = try await server.push(try decode(SyncPush.self, body, route), as: account)
            signals.wake()
            return try Self.json(answer)
        case .pull:
            return try Self.json(try await server.pull(try decode(SyncPull.self, body, route), as: account))
        case .wait:
            let request = try decode(SyncHTTP.WaitRequest.self, body, route)
            let timeout = request.timeout ?? 25
            guard timeout >= 1, timeout <= 60 else {
                throw SyncError(.invalidArgument, "a wait's timeout is 1 to 60 seconds, not \(timeout)")
            }
            guard request.after >= 0 else {
                throw SyncError(.invalidArgument, "a wait's version (after) is 0 or more, not \(request.after)")
            }
            let server = server
            var checked: Int?
            let changed = try await signals.wait(timeout: .seconds(timeout), account: account.name, checked: &checked) {
                try await server.hasChanges(after: request.after, for: account)
            }
            return try Self.json(SyncHTTP.WaitResult(changed: changed))
        case .share, .unshare:
            let request = try decode(SyncHTTP.ShareRequest.self, body, route).validated()
            let other = SyncAccount(request.account)
            switch route {
            case .share where sharesNeedAcceptance:
                try await server.offerShare(table: request.table, id: request.id, with: other, access: request.access ?? .readWrite, by: account)
                return try Self.json(["shared": false, "offered": true])
            case .share:
                try await server.share(table: request.table, id: request.id, with: other, access: request.access ?? .readWrite, by: account)
            default:
                try await server.revokeShare(table: request.table, id: request.id, from: other, by: account)
            }
            signals.wake()
            return try Self.json(["shared": route == .share])
        case .accept, .decline:
            let request = try decode(SyncHTTP.ShareRequest.self, body, route).validated()
            if route == .accept {
                try await server.acceptShare(table: request.table, id: request.id, from: SyncAccount(request.account), as: account)
                signals.wake()
            } else {
                try await server.declineShare(table: request.table, id: request.id, from: SyncAccount(request.account), as: account)
            }
            return try Self.json(["accepted": route == .accept])
        case .offers:
            return try Self.json(try await server.pendingShares(for: account))
        case .account:
            return try Self.json(["account": account.name])
        }
    }

    private func decode<T: Decodable>(_ type: T.Type, _ body: Data, _ route: Route) throws -> T {
        do {
            return try JSONDecoder().decode(T.self, from: body)
        } catch {
            throw SyncError(.invalidArgument, "the body of /\(route) is not a \(T.self): \(error)")
        }
    }

    /// Answers' JSON with sorted keys: the same answer is the same bytes (an answer that differed
    /// by its keys' order alone would tell two cases apart).
    private static func answerEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return encoder
    }

    private static func json(_ value: some Encodable, status: Int = 200) throws -> Response {
        Response(status: status, body: try answerEncoder().encode(value))
    }

    /// An error as its status and body; a server-side failure says no more than its kind.
    static func failure(_ error: any Swift.Error) -> Response {
        let (status, code, message): (Int, String, String)
        switch error {
        case let error as HTTPRefusal:
            (status, code, message) = (error.status, error.code, error.message)
        case let error as SyncError:
            switch error.code {
            case .unauthorized: status = 401
            case .forbidden: status = 403
            case .invalidArgument: status = 400
            case .startOverNeeded, .changeRefused: status = 409
            default: status = 500
            }
            (code, message) = (error.code.name, error.message)
        case let error as Postgres.Error where error.code == .connection:
            (status, code, message) = (503, "unavailable", "the sync server cannot reach its database; try again")
        case is CancellationError:
            (status, code, message) = (503, "unavailable", "the server is stopping; try again")
        case let error as Postgres.Error where error.code == .server && error.sqlState?.hasPrefix("22") == true:
            // A data exception: something of the request PostgreSQL cannot take (a NUL in a
            // nested id, a number out of a column's range): the request's fault.
            (status, code, message) = (400, "invalidArgument", "the request holds a value the server cannot take: \(error.summary)")
        case let error as Postgres.Error where ["40P01", "40001"].contains(error.sqlState ?? ""):
            // A deadlock or a serialization failure that outlasted the server's own retries.
            (status, code, message) = (503, "unavailable", "the sync server is busy; try again")
        case let error as Postgres.Error where error.sqlState == "57014":
            // statement_timeout: the database was too busy to answer in time.
            (status, code, message) = (503, "unavailable", "the sync server is busy; try again")
        default:
            (status, code, message) = (500, "serverError", "the sync server failed to answer; try again later")
        }
        let body = (try? answerEncoder().encode(SyncHTTP.Failure(error: code, message: message))) ?? Data()
        return Response(status: status, body: body)
    }
}

#endif
