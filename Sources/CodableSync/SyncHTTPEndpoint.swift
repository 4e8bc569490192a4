#if Postgres
import CodablePostgres
import CodableSQLite
import Foundation

/// The sync server's HTTP API, for any HTTP framework: each route takes the request's
/// `Authorization` header and body, and gives a status and a JSON body. `CodableSyncHummingbird`
/// mounts it on a Hummingbird router; on Vapor (or anything else), a route per
/// ``Route`` calls ``respond(to:authorization:body:)``:
///
/// ```swift
/// let endpoint = SyncHTTPEndpoint(server: syncServer)   // tokens checked by the server's accounts
/// for route in SyncHTTPEndpoint.Route.allCases {
///     app.on(route.method == "GET" ? .GET : .POST, "sync", "\(route)") { request async in
///         let answer = await endpoint.respond(to: route, authorization: request.headers.first(name: "Authorization"),
///                                             body: Data(buffer: request.body.data ?? ByteBuffer()))
///         return Response(status: .init(statusCode: answer.status), body: .init(data: answer.body))
///     }
/// }
/// ```
///
/// Every request names its account by a bearer token (`Authorization: Bearer <token>`), checked
/// by the hook given (by default the server's own accounts, ``Postgres/SyncServer/authenticate(token:)``);
/// the body never does. Errors are `{"error": code, "message": …}` with 400 (a malformed
/// request), 401 (no valid token), 403 (not the account's to do), 409 (the device must start
/// over), 503 (the database is unreachable: try again) or 500.
///
/// Sendable: immutable, apart from the lock-guarded waiters of ``Route/wait``.
public final class SyncHTTPEndpoint: Sendable {
    /// The routes, under a prefix of the app's choosing (`/sync/push`, …).
    public enum Route: String, Sendable, CaseIterable, CustomStringConvertible {
        /// `POST` a ``SyncPush``, answered with a ``SyncPushResult``.
        case push
        /// `POST` a ``SyncPull``, answered with a ``SyncPullResult``.
        case pull
        /// `POST` ``WaitRequest``: answers ``WaitResult`` once the server may have changes after
        /// the version given, or after the timeout (long polling).
        case wait
        /// `POST` ``ShareRequest``: shares a row the account owns.
        case share
        /// `POST` ``ShareRequest``: ends a share of a row the account owns.
        case unshare
        /// `GET`: the token's account, `{"account": name}`.
        case account

        /// The HTTP method.
        public var method: String { self == .account ? "GET" : "POST" }
        public var description: String { rawValue }
    }

    /// The body of ``Route/wait``.
    public struct WaitRequest: Codable, Sendable {
        /// The version the device pulled last.
        public var after: Int64
        /// How long to wait at most, in seconds (1 to 60; 25 when absent).
        public var timeout: Double?
        public init(after: Int64, timeout: Double? = nil) {
            self.after = after
            self.timeout = timeout
        }
    }

    /// The answer of ``Route/wait``.
    public struct WaitResult: Codable, Sendable {
        /// Whether the server may have changes for the device (it pulls then).
        public var changed: Bool
        public init(changed: Bool) { self.changed = changed }
    }

    /// The body of ``Route/share`` and ``Route/unshare``.
    public struct ShareRequest: Codable, Sendable {
        public var table: String
        public var id: String
        /// The account to share with (or to stop sharing with).
        public var account: String
        /// `read` or `readWrite` (the default), for ``Route/share``.
        public var access: SyncAccess?
        public init(table: String, id: String, account: String, access: SyncAccess? = nil) {
            self.table = table
            self.id = id
            self.account = account
            self.access = access
        }
    }

    /// An HTTP answer: its status and its JSON body.
    public struct Response: Sendable {
        public let status: Int
        public let body: Data
        public var contentType: String { "application/json" }
    }

    /// An error's body.
    struct Failure: Codable {
        let error: String
        let message: String
    }

    public let server: Postgres.SyncServer
    private let authenticate: @Sendable (String) async throws -> SyncAccount?
    private let signals: CommitSignals
    /// The largest body taken (64 MiB): a push of 10,000 changes fits many times.
    public static let maximumBodySize = 64 << 20

    /// - Parameter authenticate: the account of a bearer token, `nil` for a token it refuses
    ///   (answered 401; or throw `SQLite.Sync.Error.Code.unauthorized` to say why). Any other
    ///   error it throws is the server's failure (500, or 503 for a lost database). Defaults to
    ///   the server's accounts (``Postgres/SyncServer/addAccount(_:tokenLifetime:)``).
    public init(server: Postgres.SyncServer, authenticate: (@Sendable (_ bearerToken: String) async throws -> SyncAccount?)? = nil) {
        self.server = server
        self.authenticate = authenticate ?? { token in try await server.authenticate(token: token) }
        signals = CommitSignals(server: server)
    }

    /// Answers one request of `route`.
    public func respond(to route: Route, authorization: String?, body: Data) async -> Response {
        do {
            guard body.count <= Self.maximumBodySize else {
                throw SQLite.Sync.Error(.invalidArgument, "the request's body is over \(Self.maximumBodySize) bytes")
            }
            guard let header = authorization, header.lowercased().hasPrefix("bearer "),
                  case let token = header.dropFirst(7).trimmingCharacters(in: .whitespaces), !token.isEmpty else {
                throw SQLite.Sync.Error(.unauthorized, "the request has no bearer token (Authorization: Bearer <token>)")
            }
            guard let account = try await authenticate(token) else {
                throw SQLite.Sync.Error(.unauthorized, "the token was refused")
            }
            switch route {
            case .push:
                let answer = try await server.push(try decode(SyncPush.self, body, route), as: account)
                signals.wake()
                return try Self.json(answer)
            case .pull:
                return try Self.json(try await server.pull(try decode(SyncPull.self, body, route), as: account))
            case .wait:
                let request = try decode(WaitRequest.self, body, route)
                let timeout = request.timeout ?? 25
                guard timeout >= 1, timeout <= 60 else {
                    throw SQLite.Sync.Error(.invalidArgument, "a wait's timeout is 1 to 60 seconds, not \(timeout)")
                }
                let server = server
                let changed = try await signals.wait(timeout: .seconds(timeout)) {
                    try await server.hasChanges(after: request.after, for: account)
                }
                return try Self.json(WaitResult(changed: changed))
            case .share, .unshare:
                let request = try decode(ShareRequest.self, body, route)
                if route == .share {
                    try await server.share(
                        table: request.table, id: request.id, with: SyncAccount(request.account), access: request.access ?? .readWrite, by: account)
                } else {
                    try await server.revokeShare(table: request.table, id: request.id, from: SyncAccount(request.account), by: account)
                }
                signals.wake()
                return try Self.json(["shared": route == .share])
            case .account:
                return try Self.json(["account": account.name])
            }
        } catch {
            return Self.failure(error)
        }
    }

    private func decode<T: Decodable>(_ type: T.Type, _ body: Data, _ route: Route) throws -> T {
        do {
            return try JSONDecoder().decode(T.self, from: body)
        } catch {
            throw SQLite.Sync.Error(.invalidArgument, "the body of /\(route) is not a \(T.self): \(error)")
        }
    }

    private static func json(_ value: some Encodable, status: Int = 200) throws -> Response {
        Response(status: status, body: try JSONEncoder().encode(value))
    }

    /// An error as its status and body; a server-side failure says no more than its kind.
    static func failure(_ error: any Swift.Error) -> Response {
        let (status, code, message): (Int, String, String)
        switch error {
        case let error as SQLite.Sync.Error:
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
        default:
            (status, code, message) = (500, "serverError", "the sync server failed to answer; try again later")
        }
        let body = (try? JSONEncoder().encode(Failure(error: code, message: message))) ?? Data()
        return Response(status: status, body: body)
    }
}

/// The server's commit signals, shared by every waiting request: one listening stream for the
/// endpoint (started with the first wait), however many devices wait.
///
/// Sendable: its state is behind a lock.
final class CommitSignals: Sendable {
    private struct State {
        var waiters: [UUID: Waiter] = [:]
        var listening: Task<Void, Never>?
    }

    /// One waiting request: answered once, by whichever comes first (a signal, the timeout,
    /// cancellation), before or after it starts waiting.
    private final class Waiter: Sendable {
        private let state = Locked<(continuation: CheckedContinuation<Bool, Never>?, result: Bool?)>((nil, nil))

        func answer(_ result: Bool) {
            let continuation = state.withLock { state -> CheckedContinuation<Bool, Never>? in
                guard state.result == nil else { return nil }
                state.result = result
                defer { state.continuation = nil }
                return state.continuation
            }
            continuation?.resume(returning: result)
        }

        func result() async -> Bool {
            await withCheckedContinuation { continuation in
                let answered = state.withLock { state -> Bool? in
                    if state.result == nil { state.continuation = continuation }
                    return state.result
                }
                if let answered { continuation.resume(returning: answered) }
            }
        }
    }

    private let server: Postgres.SyncServer
    private let state = Locked(State())

    init(server: Postgres.SyncServer) { self.server = server }

    deinit { state.withLock { $0.listening?.cancel() } }

    /// Wakes every waiting request (a change the server made or heard of).
    func wake() {
        let waiters = state.withLock { state in
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.answer(true) }
    }

    /// `true` as soon as `hasNews` says so: at once, or after a commit signal; `false` after
    /// `timeout` (or when cancelled). A signal for rows `hasNews` does not see (another
    /// account's) goes on waiting.
    func wait(timeout: Duration, hasNews: @escaping @Sendable () async throws -> Bool) async throws -> Bool {
        startListening()
        let deadline = ContinuousClock.now + timeout
        while true {
            let id = UUID(), waiter = Waiter()
            // Registered first, then checked: a commit in between wakes it.
            state.withLock { $0.waiters[id] = waiter }
            defer { state.withLock { _ = $0.waiters.removeValue(forKey: id) } }
            if try await hasNews() { return true }
            let timer = Task {
                try? await Task.sleep(until: deadline)
                waiter.answer(false)
            }
            defer { timer.cancel() }
            let signalled = await withTaskCancellationHandler {
                await waiter.result()
            } onCancel: {
                waiter.answer(false)
            }
            if !signalled { return false }
        }
    }

    private func startListening() {
        state.withLock { state in
            guard state.listening == nil else { return }
            state.listening = Task.detached { [weak self] in
                while !Task.isCancelled {
                    do {
                        guard let stream = try await self?.server.serverChanges() else { return }
                        for try await _ in stream { self?.wake() }
                    } catch {
                        // The listening connection failed: waiters time out meanwhile; try again.
                        try? await Task.sleep(for: .seconds(1))
                    }
                }
            }
        }
    }
}
#endif
