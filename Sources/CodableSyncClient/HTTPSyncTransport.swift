import CodableSQLite
import CodableSyncProtocol
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
/// A token the server refuses throws `SyncError.Code.unauthorized` with the server's
/// words; an action the account may not do, `.forbidden`; a server or network that fails throws
/// ``HTTPSyncTransport/Failure``, after which `run()` tries again and `sync()` can be called again
/// (nothing is lost: pushes are sent again whole, and the server recognises them).
///
/// Safe against a hostile server, or one in the way: an answer over the `maximumAnswerSize` given is
/// refused as it arrives, a redirect to another origin is not followed (the token never leaves
/// the server's origin), every answer is checked (`SyncPullResult.validate(after:limit:)`,
/// `SyncPushResult.validate(for:)`) before it is used, and the token is not sent in clear over
/// `http://` to another machine unless `allowsInsecureHTTP` says so. Each of these throws
/// `SyncError.Code.invalidAnswer` (or `.invalidArgument` for the URL), and the device
/// applies nothing of that answer.
///
/// Sendable: immutable, apart from a lock-guarded last pulled version and the requests under way.
public struct HTTPSyncTransport: SyncTransport {
    /// The routes' prefix: `…/push`, `…/pull` and so on are under it.
    package let server: URL
    let token: String
    /// The session the requests go through: this transport's own, with the configuration of the
    /// session given to the initializer, and a delegate that enforces the limits.
    var session: URLSession { connection.session }
    let connection: Connection
    /// How long one long poll waits on the server (seconds).
    package let waitTimeout: Double
    /// The largest answer taken, in bytes (64 MiB unless the initializer says otherwise): a
    /// larger one is refused as soon as its `Content-Length`, or the bytes received, pass it.
    ///
    /// ```swift
    /// let transport = HTTPSyncTransport(server: url, token: token, maximumAnswerSize: 16 << 20)
    /// ```
    package let maximumAnswerSize: Int
    /// Whether the token may go in clear, over `http://`, to a host other than this machine
    /// (127.0.0.0/8, `::1`, `localhost`); `false` unless the initializer says so, and then such a
    /// URL throws `SyncError.Code.invalidArgument` at the first request.
    ///
    /// ```swift
    /// // A test server on the local network, on purpose:
    /// let transport = HTTPSyncTransport(server: URL(string: "http://10.0.0.5:8080/sync")!, token: token, allowsInsecureHTTP: true)
    /// ```
    package let allowsInsecureHTTP: Bool
    /// Whether a running device listens to the server's event stream (live pushes, `GET
    /// …/events`), falling back to long polls where the server has none; `false`: long polls
    /// only (for a proxy that buffers streamed answers). `true` unless the initializer says so.
    package let usesEvents: Bool
    /// The version of the last pull answered, for the long polls.
    let lastVersion = PulledVersion()

    /// A failure of the server or of the way to it, which may pass: `run()` tries again.
    public struct Failure: Swift.Error, Sendable, CustomStringConvertible {
        /// The HTTP status, `nil` when no answer came.
        public let status: Int?
        public let message: String
        public var description: String { status.map { "the sync server answered \($0): \(message)" } ?? message }
    }

    /// - Parameters:
    ///   - server: the URL the routes are under (`https://sync.example.com/sync`; `http://` only
    ///     to this machine, such as `http://localhost:8080/sync`, unless `allowsInsecureHTTP`).
    ///   - token: the account's bearer token.
    ///   - session: whose configuration the requests use (timeouts, proxies, caches); the
    ///     transport makes a session of its own with it, to enforce the limits below.
    ///   - waitTimeout: how long a long poll waits before the server answers "nothing" (1 to 60 s).
    ///   - maximumAnswerSize: the largest answer taken, in bytes (see ``maximumAnswerSize``).
    ///   - allowsInsecureHTTP: whether `http://` to another machine is allowed (see
    ///     ``allowsInsecureHTTP``).
    ///   - usesEvents: whether a running device listens to the server's event stream (see
    ///     ``usesEvents``).
    ///
    /// ```swift
    /// let transport = HTTPSyncTransport(server: URL(string: "https://sync.example.com/sync")!, token: token)
    /// ```
    public init(
        server: URL, token: String, session: URLSession = .shared, waitTimeout: Double = 25,
        maximumAnswerSize: Int = 64 << 20, allowsInsecureHTTP: Bool = false, usesEvents: Bool = true
    ) {
        self.usesEvents = usesEvents
        self.server = server
        self.token = token
        self.waitTimeout = waitTimeout.isNaN ? 25 : min(max(waitTimeout, 1), 60)
        self.maximumAnswerSize = max(maximumAnswerSize, 1)
        self.allowsInsecureHTTP = allowsInsecureHTTP
        // One session for every transport made with the shared one (a session costs a connection
        // pool and a queue of its own), one per transport otherwise.
        connection = session === URLSession.shared ? Connection.shared : Connection(configuration: session.configuration)
    }

    public func push(_ push: SyncPush) async throws -> SyncPushResult {
        let answer: SyncPushResult = try await post(.push, push)
        try answer.validate(for: push)
        return answer
    }

    public func pull(_ pull: SyncPull) async throws -> SyncPullResult {
        let answer: SyncPullResult = try await post(.pull, pull)
        try answer.validate(after: pull.after, limit: pull.limit)
        lastVersion.set(answer.version)
        return answer
    }

    /// Live pushes: the server's event stream (`GET …/events`, server-sent events) signals each
    /// time it may have changes for this account; where the server has none (404: an older
    /// server) or it fails, long polls (`POST …/wait`): one request at a time waits until the
    /// server may have changes, then signals. A stream that ends, or a failed poll, ends this
    /// stream (`run()` goes on polling every `pollInterval` meanwhile, and asks again).
    public func serverChanges() async throws -> AsyncThrowingStream<Void, any Swift.Error>? {
        let (stream, continuation) = AsyncThrowingStream<Void, any Swift.Error>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let polling = Task {
            do {
                if usesEvents {
                    try await listenForEvents { continuation.yield() }
                    throw Failure(status: nil, message: "the sync server ended its event stream")
                }
            } catch is EventsUnavailable {
                // Long polling below.
            } catch {
                continuation.finish(throwing: error)
                return
            }
            do {
                while !Task.isCancelled {
                    let (after, pulls) = lastVersion.value
                    let answer: SyncHTTP.WaitResult = try await post(
                        .wait, SyncHTTP.WaitRequest(after: after, timeout: waitTimeout), timeout: waitTimeout + 15)
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

    /// The row form of ``share(_:with:access:)``.
    package func share(table: String, id: String, with account: SyncAccount, access: SyncAccess = .readWrite) async throws {
        let _: [String: Bool] = try await post(.share, SyncHTTP.ShareRequest(table: table, id: id, account: account.name, access: access))
    }

    /// Shares a row this account owns, with every row it links, with another account
    /// (``SyncHTTP/Route/share``; ``Postgres/SyncServer/share(_:with:access:by:)``
    /// on the server).
    ///
    /// - Throws: `SyncError.Code.forbidden` when this account does not own the row (or the
    ///   server does not have it yet: sync first), `.invalidArgument` for an unknown account.
    public func share<T: Model>(_ value: T, with account: SyncAccount, access: SyncAccess = .readWrite) async throws {
        try await share(table: T.tableName, id: SyncedModel.idText(value), with: account, access: access)
    }

    /// The row form of ``revokeShare(_:from:)``.
    package func revokeShare(table: String, id: String, from account: SyncAccount) async throws {
        let _: [String: Bool] = try await post(.unshare, SyncHTTP.ShareRequest(table: table, id: id, account: account.name))
    }

    /// Ends a share of a row this account owns (``SyncHTTP/Route/unshare``): the rows
    /// leave the other account's devices at their next pull.
    public func revokeShare<T: Model>(_ value: T, from account: SyncAccount) async throws {
        try await revokeShare(table: T.tableName, id: SyncedModel.idText(value), from: account)
    }

    /// The account the token names (``SyncHTTP/Route/account``).
    public func account() async throws -> SyncAccount {
        let answer: [String: String] = try await send(.account, body: nil, timeout: 30)
        guard let name = answer["account"] else { throw Failure(status: 200, message: "the server's answer names no account") }
        try SyncLimits.check(name, "the account's name", atMost: SyncLimits.name, nonEmpty: true) {
            SyncError(.invalidAnswer, "the server's answer to /account is refused: \($0)")
        }
        return SyncAccount(name)
    }

    private func post<Body: Encodable, Answer: Decodable>(_ route: SyncHTTP.Route, _ body: Body, timeout: Double = 120) async throws -> Answer {
        try await send(route, body: try JSONEncoder().encode(body), timeout: timeout)
    }

    private func send<Answer: Decodable>(_ route: SyncHTTP.Route, body: Data?, timeout: Double) async throws -> Answer {
        let origin = try checkedOrigin()
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
            (data, response) = try await perform(request, origin: origin)
        } catch is CancellationError {
            throw CancellationError()
        } catch let error as SyncError {
            throw error
        } catch {
            try Task.checkCancellation()
            throw Failure(status: nil, message: "cannot reach the sync server at \(server.absoluteString): \(error.localizedDescription)")
        }
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard status == 200 else {
            let failure = try? JSONDecoder().decode(SyncHTTP.Failure.self, from: data)
            // The server's words, as much of them as a message needs.
            let message = String((failure?.message ?? String(decoding: data.prefix(500), as: UTF8.self)).prefix(2_000))
            switch status {
            case 401: throw SyncError(.unauthorized, "the sync server refused the token: \(message)")
            case 403: throw SyncError(.forbidden, message)
            case 400: throw SyncError(.invalidArgument, "the sync server refused the request: \(message)")
            case 409 where failure?.error == SyncError.Code.startOverNeeded.name: throw SyncError(.startOverNeeded, message)
            case 409 where failure?.error == SyncError.Code.changeRefused.name: throw SyncError(.changeRefused, message)
            default: throw Failure(status: status, message: message)
            }
        }
        do {
            return try JSONDecoder().decode(Answer.self, from: data)
        } catch {
            throw Failure(status: status, message: "the answer of /\(route) is not what it should be: \(error)")
        }
    }

    /// The server's origin, once its URL is one the token may go to: `https://`, or `http://` to
    /// this machine (or anywhere, with ``allowsInsecureHTTP``).
    func checkedOrigin() throws -> Origin {
        guard let origin = Origin(server), origin.scheme == "https" || origin.scheme == "http" else {
            throw SyncError(.invalidArgument, "the sync server's URL must be https:// (or http:// to this machine), not \(server.absoluteString)")
        }
        guard origin.scheme == "https" || allowsInsecureHTTP || Self.isLoopback(origin.host) else {
            throw SyncError(.invalidArgument, """
                the sync server's URL \(server.absoluteString) is http:// to another machine, which would send the token in clear: \
                use https://, or allowsInsecureHTTP: true (todo: --allow-insecure-http) on a network you trust
                """)
        }
        return origin
    }

    /// Whether `host` is this machine: `localhost`, 127.0.0.0/8 or `::1`.
    static func isLoopback(_ host: String) -> Bool {
        var host = host.lowercased()
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host == "localhost" || host == "localhost." || host == "::1" || host == "0:0:0:0:0:0:0:1" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == "127" else { return false }
        return parts.allSatisfy { part in part.count <= 3 && !part.isEmpty && part.allSatisfy(\.isASCII) && UInt8(part) != nil }
    }
}

extension HTTPSyncTransport {
    /// `session.data(for:)`, cancelled safely: FoundationNetworking's own async form can deadlock
    /// when its task is cancelled (the cancellation handler waits for the session's queue while
    /// that queue resumes the task, each under the other's lock: seen with `run()` cancelled during
    /// a long poll). The request is cancelled from another thread instead. The answer is
    /// collected by the session's delegate, which refuses it past ``maximumAnswerSize`` and does
    /// not follow a redirect out of `origin`.
    func perform(_ request: URLRequest, origin: Origin) async throws -> (Data, URLResponse) {
        let running = RunningRequest()
        let connection = connection
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<(Data, URLResponse), any Swift.Error>) in
                let task = connection.session.dataTask(with: request)
                connection.collector.collect(task, origin: origin, limit: maximumAnswerSize, continuation)
                running.start(task)
            }
        } onCancel: {
            running.cancel()
        }
    }
}

/// A URL's origin: scheme, host and port (the scheme's default when the URL has none), in lower
/// case. A redirect is followed only within the server's origin.
struct Origin: Hashable, Sendable, CustomStringConvertible {
    let scheme: String
    let host: String
    let port: Int

    init?(_ url: URL?) {
        guard let url, let scheme = url.scheme?.lowercased(), var host = url.host?.lowercased(), !host.isEmpty else { return nil }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard let port = url.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : nil) else { return nil }
        self.scheme = scheme
        self.host = host
        self.port = port
    }

    var description: String { "\(scheme)://\(host.contains(":") ? "[\(host)]" : host):\(port)" }
}

/// A transport's session, invalidated when the last copy of the transport is gone (a session
/// keeps its delegate until then).
final class Connection: Sendable {
    let session: URLSession
    let collector: AnswerCollector

    /// The session of the transports made with `URLSession.shared`, for the process's life.
    static let shared = Connection(configuration: URLSession.shared.configuration)

    init(configuration: URLSessionConfiguration) {
        collector = AnswerCollector()
        session = URLSession(configuration: configuration, delegate: collector, delegateQueue: nil)
    }

    deinit { session.finishTasksAndInvalidate() }
}

/// The delegate of a transport's session: collects each request's answer, up to the largest
/// size taken, refuses redirects out of the request's origin, and resumes the request's
/// continuation once, when its task completes.
///
/// Sendable: its state is behind a lock; its own constant otherwise.
final class AnswerCollector: NSObject, URLSessionDataDelegate, Sendable {
    private struct Request {
        let continuation: CheckedContinuation<(Data, URLResponse), any Swift.Error>
        let origin: Origin
        /// The largest answer taken (the transport's `maximumAnswerSize`).
        let limit: Int
        var data = Data()
        /// Why the answer is refused, once it is: the rest of it is dropped.
        var refusal: SyncError?
    }

    private let requests = Locked<[Int: Request]>([:])
    /// The event streams under way (``HTTPSyncTransport/listenForEvents(_:)``), by task.
    let listeners = Locked<[Int: EventListener]>([:])

    /// Collects the answer of `task`, not started yet, for `continuation`.
    func collect(_ task: URLSessionTask, origin: Origin, limit: Int, _ continuation: CheckedContinuation<(Data, URLResponse), any Swift.Error>) {
        requests.withLock { $0[task.taskIdentifier] = Request(continuation: continuation, origin: origin, limit: limit) }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        if let listener = listeners.withLock({ $0[dataTask.taskIdentifier] }) {
            if !listener.receive(data, response: dataTask.response) { RunningRequest.cancelLater(dataTask) }
            return
        }
        let claimed = dataTask.response?.expectedContentLength ?? -1
        let tooLarge = requests.withLock { requests -> Bool in
            let id = dataTask.taskIdentifier
            guard let (limit, received, refused) = requests[id].map({ ($0.limit, $0.data.count, $0.refusal != nil) }), !refused else { return false }
            guard claimed <= Int64(limit), data.count <= limit - received else {
                let size = claimed > Int64(limit) ? "\(claimed) bytes (its Content-Length)" : "more than \(limit) bytes"
                requests[id]?.refusal = SyncError(
                    .invalidAnswer, "the sync server's answer is \(size), more than the \(limit) this device takes: refused")
                requests[id]?.data = Data()
                return true
            }
            // In place: the collected bytes are not copied for each chunk.
            requests[id]?.data.append(data)
            return false
        }
        if tooLarge { RunningRequest.cancelLater(dataTask) }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void
    ) {
        let follow = requests.withLock { requests -> Bool in
            let id = task.taskIdentifier
            guard let origin = requests[id]?.origin else { return false }
            let target = Origin(request.url)
            if target == origin { return true }
            requests[id]?.refusal = SyncError(.invalidAnswer, """
                the sync server at \(origin) redirected to \(target?.description ?? "a URL without an origin"), another origin: not followed, \
                so that the token is not sent there
                """)
            return false
        }
        // Not followed: the redirect itself is the answer, which its refusal replaces.
        completionHandler(follow ? request : nil)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Swift.Error)?) {
        if let listener = listeners.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) {
            listener.end(error, response: task.response)
            return
        }
        guard let request = requests.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        if let refusal = request.refusal {
            request.continuation.resume(throwing: refusal)
        } else if let error {
            request.continuation.resume(throwing: error)
        } else if let response = task.response {
            request.continuation.resume(returning: (request.data, response))
        } else {
            request.continuation.resume(throwing: HTTPSyncTransport.Failure(status: nil, message: "the sync server's answer was empty"))
        }
    }
}

/// A request's `URLSessionTask`, cancelled at most once, never on the cancelling thread.
///
/// Sendable: its state is behind a lock; `URLSessionTask`'s methods may be called from any thread.
final class RunningRequest: Sendable {
    private let state = Locked<(task: URLSessionTask?, cancelled: Bool)>((nil, false))

    /// Starts `task`, or cancels it at once when the request was cancelled before it started.
    func start(_ task: URLSessionTask) {
        let cancelled = state.withLock { state -> Bool in
            state.task = task
            return state.cancelled
        }
        task.resume()
        if cancelled { Self.cancelLater(task) }
    }

    func cancel() {
        let task = state.withLock { state -> URLSessionTask? in
            state.cancelled = true
            return state.task
        }
        if let task { Self.cancelLater(task) }
    }

    /// Cancels `task` from another thread (never the caller's: a session's queue, or a task's
    /// cancellation handler).
    static func cancelLater(_ task: URLSessionTask) {
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
final class PulledVersion: Sendable {
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
