#if Postgres
import CodableSQLite
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A device's way to a sync server over HTTP (``SyncHTTPEndpoint``'s routes, served by `todo
/// serve` or an app's own server), with a bearer token naming its account:
///
/// ```swift
/// let transport = HTTPSyncTransport(server: URL(string: "https://example.com/sync")!, token: token)
/// let sync = try SQLite.Sync(local: db, transport: transport, models: [Note.self, Folder.self])
/// try await sync.run()   // live: it long-polls the server's `wait` route between rounds
/// ```
///
/// A token the server refuses throws `SQLite.Sync.Error.Code.unauthorized` with the server's
/// words; an action the account may not do, `.forbidden`; a server or network that fails throws
/// ``HTTPSyncTransport/Failure``, after which `run()` tries again and `sync()` can be called again
/// (nothing is lost: pushes are sent again whole, and the server recognises them).
///
/// Sendable: immutable, apart from a lock-guarded last pulled version.
public struct HTTPSyncTransport: SyncTransport {
    /// The routes' prefix: `…/push`, `…/pull` and so on are under it.
    public let server: URL
    let token: String
    let session: URLSession
    /// How long one long poll waits on the server (seconds).
    public let waitTimeout: Double
    /// The version of the last pull answered, for the long polls.
    private let lastVersion = PulledVersion()

    /// A failure of the server or of the way to it, which may pass: `run()` tries again.
    public struct Failure: Swift.Error, Sendable, CustomStringConvertible {
        /// The HTTP status, `nil` when no answer came.
        public let status: Int?
        public let message: String
        public var description: String { status.map { "the sync server answered \($0): \(message)" } ?? message }
    }

    /// - Parameters:
    ///   - server: the URL the routes are under (`http://localhost:8080/sync`).
    ///   - token: the account's bearer token.
    ///   - waitTimeout: how long a long poll waits before the server answers "nothing" (1 to 60 s).
    public init(server: URL, token: String, session: URLSession = .shared, waitTimeout: Double = 25) {
        self.server = server
        self.token = token
        self.session = session
        self.waitTimeout = min(max(waitTimeout, 1), 60)
    }

    public func push(_ push: SyncPush) async throws -> SyncPushResult {
        try await post(.push, push)
    }

    public func pull(_ pull: SyncPull) async throws -> SyncPullResult {
        let answer: SyncPullResult = try await post(.pull, pull)
        lastVersion.set(answer.version)
        return answer
    }

    /// Long polls: one request at a time waits until the server may have changes for this
    /// account, then signals; a failed poll ends the stream with its error (`run()` goes on
    /// polling every `pollInterval` meanwhile, and asks again).
    public func serverChanges() async throws -> AsyncThrowingStream<Void, any Swift.Error>? {
        let (stream, continuation) = AsyncThrowingStream<Void, any Swift.Error>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let polling = Task {
            do {
                while !Task.isCancelled {
                    let (after, pulls) = lastVersion.value
                    let answer: SyncHTTPEndpoint.WaitResult = try await post(
                        .wait, SyncHTTPEndpoint.WaitRequest(after: after, timeout: waitTimeout), timeout: waitTimeout + 15)
                    if answer.changed {
                        continuation.yield()
                        // Until the device pulls, the same version would answer at once.
                        await lastVersion.pulled(after: pulls)
                    }
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in polling.cancel() }
        return stream
    }

    /// Shares a row this account owns, with every row it links, with another account
    /// (``SyncHTTPEndpoint/Route/share``; ``Postgres/SyncServer/share(table:id:with:access:by:)``
    /// on the server).
    ///
    /// - Throws: `SQLite.Sync.Error.Code.forbidden` when this account does not own the row (or the
    ///   server does not have it yet: sync first), `.invalidArgument` for an unknown account.
    public func share(table: String, id: String, with account: SyncAccount, access: SyncAccess = .readWrite) async throws {
        let _: [String: Bool] = try await post(.share, SyncHTTPEndpoint.ShareRequest(table: table, id: id, account: account.name, access: access))
    }

    /// ``share(table:id:with:access:)`` for a model value.
    public func share<T: Model>(_ value: T, with account: SyncAccount, access: SyncAccess = .readWrite) async throws {
        try await share(table: T.tableName, id: SyncedModel.idText(value), with: account, access: access)
    }

    /// Ends a share of a row this account owns (``SyncHTTPEndpoint/Route/unshare``): the rows
    /// leave the other account's devices at their next pull.
    public func revokeShare(table: String, id: String, from account: SyncAccount) async throws {
        let _: [String: Bool] = try await post(.unshare, SyncHTTPEndpoint.ShareRequest(table: table, id: id, account: account.name))
    }

    /// ``revokeShare(table:id:from:)`` for a model value.
    public func revokeShare<T: Model>(_ value: T, from account: SyncAccount) async throws {
        try await revokeShare(table: T.tableName, id: SyncedModel.idText(value), from: account)
    }

    /// The account the token names (``SyncHTTPEndpoint/Route/account``).
    public func account() async throws -> SyncAccount {
        let answer: [String: String] = try await send(.account, body: nil, timeout: 30)
        guard let name = answer["account"] else { throw Failure(status: 200, message: "the server's answer names no account") }
        return SyncAccount(name)
    }

    private func post<Body: Encodable, Answer: Decodable>(_ route: SyncHTTPEndpoint.Route, _ body: Body, timeout: Double = 120) async throws -> Answer {
        try await send(route, body: try JSONEncoder().encode(body), timeout: timeout)
    }

    private func send<Answer: Decodable>(_ route: SyncHTTPEndpoint.Route, body: Data?, timeout: Double) async throws -> Answer {
        var request = URLRequest(url: server.appendingPathComponent(route.rawValue), timeoutInterval: timeout)
        request.httpMethod = route.method
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        if let body {
            request.httpBody = body
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            // No `Expect: 100-continue` round trip before the body (libcurl, under URLSession on
            // Linux, asks for one for bodies over 1 KB).
            request.setValue("", forHTTPHeaderField: "Expect")
        }
        let data: Data, response: URLResponse
        do {
            (data, response) = try await perform(request)
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            try Task.checkCancellation()
            throw Failure(status: nil, message: "cannot reach the sync server at \(server.absoluteString): \(error.localizedDescription)")
        }
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard status == 200 else {
            let failure = try? JSONDecoder().decode(SyncHTTPEndpoint.Failure.self, from: data)
            let message = failure?.message ?? String(decoding: data.prefix(500), as: UTF8.self)
            switch status {
            case 401: throw SQLite.Sync.Error(.unauthorized, "the sync server refused the token: \(message)")
            case 403: throw SQLite.Sync.Error(.forbidden, message)
            case 400: throw SQLite.Sync.Error(.invalidArgument, "the sync server refused the request: \(message)")
            case 409 where failure?.error == SQLite.Sync.Error.Code.startOverNeeded.name: throw SQLite.Sync.Error(.startOverNeeded, message)
            case 409 where failure?.error == SQLite.Sync.Error.Code.changeRefused.name: throw SQLite.Sync.Error(.changeRefused, message)
            default: throw Failure(status: status, message: message)
            }
        }
        do {
            return try JSONDecoder().decode(Answer.self, from: data)
        } catch {
            throw Failure(status: status, message: "the answer of /\(route) is not what it should be: \(error)")
        }
    }
}

extension HTTPSyncTransport {
    /// `session.data(for:)`, cancelled safely: FoundationNetworking's own async form can deadlock
    /// when its task is cancelled (the cancellation handler waits for the session's queue while
    /// that queue resumes the task, each under the other's lock: seen with `run()` cancelled during
    /// a long poll). The request is cancelled from another thread instead.
    func perform(_ request: URLRequest) async throws -> (Data, URLResponse) {
        let running = RunningRequest()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<(Data, URLResponse), any Swift.Error>) in
                let task = session.dataTask(with: request) { data, response, error in
                    if let error {
                        continuation.resume(throwing: error)
                    } else if let data, let response {
                        continuation.resume(returning: (data, response))
                    } else {
                        continuation.resume(throwing: Failure(status: nil, message: "the sync server's answer was empty"))
                    }
                }
                running.start(task)
            }
        } onCancel: {
            running.cancel()
        }
    }
}

/// A request's `URLSessionTask`, cancelled at most once, never on the cancelling thread.
///
/// Sendable: its state is behind a lock; `URLSessionTask`'s methods may be called from any thread.
private final class RunningRequest: Sendable {
    private let state = Locked<(task: URLSessionTask?, cancelled: Bool)>((nil, false))

    /// Starts `task`, or cancels it at once when the request was cancelled before it started.
    func start(_ task: URLSessionTask) {
        let cancelled = state.withLock { state -> Bool in
            state.task = task
            return state.cancelled
        }
        task.resume()
        if cancelled { cancelLater(task) }
    }

    func cancel() {
        let task = state.withLock { state -> URLSessionTask? in
            state.cancelled = true
            return state.task
        }
        if let task { cancelLater(task) }
    }

    private func cancelLater(_ task: URLSessionTask) {
        let task = UncheckedTask(task)
        DispatchQueue.global().async { task.value.cancel() }
    }
}

/// A `URLSessionTask` handed to another thread (its methods are thread-safe).
private struct UncheckedTask: @unchecked Sendable {  // URLSessionTask is documented thread-safe
    let value: URLSessionTask
    init(_ value: URLSessionTask) { self.value = value }
}

/// The version of a transport's last pull, and the long poll waiting for the next pull.
///
/// Sendable: its state is behind a lock.
private final class PulledVersion: Sendable {
    private struct State {
        var version: Int64 = 0
        /// How many pulls were answered.
        var pulls = 0
        var waiters: [UUID: CheckedContinuation<Void, Never>] = [:]
    }

    private let state = Locked(State())

    /// The last version pulled, and how many pulls were answered.
    var value: (version: Int64, pulls: Int) { state.withLock { ($0.version, $0.pulls) } }

    func set(_ version: Int64) {
        let waiters = state.withLock { state in
            state.version = version
            state.pulls += 1
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once more than `pulls` pulls were answered (the device pulled after a signal),
    /// or the task is cancelled.
    func pulled(after pulls: Int) async {
        let id = UUID()
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let now = state.withLock { state -> Bool in
                    guard state.pulls == pulls, !Task.isCancelled else { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }
}
#endif
