#if Postgres
import Foundation
import PostgresNIO

/// Something told about committed changes to tables: a live query or a change sequence.
protocol ChangeSubscriber: AnyObject, Sendable {
    /// The tables it follows (a live query of a model with relationships follows its graph's).
    var tables: Set<String> { get }
    /// Whether it wants a transaction's notifications together (a change sequence's batch) rather
    /// than each as it arrives (a live query, which reads again at the first).
    var wantsWholeTransactions: Bool { get }
    /// A transaction that changed the table committed. Called in commit order; must only
    /// schedule work.
    func committed(_ commit: ChangeNotifications.TableCommit)
    /// Listening resumed after the connection was lost: anything may have changed meanwhile.
    func resumed()
    /// The database was closed: the observation ends.
    func databaseClosed()
}

/// The database's listening connection: one connection of its own (outside the pool, which
/// would hand it to other statements), `LISTEN`ing on ``ChangeNotifications/channel`` while at
/// least one subscriber exists.
///
/// - Notifications of one transaction arrive together. Live queries get each at once (the
///   transaction has committed: a read now sees all of it). Change sequences get them grouped by
///   transaction id, one ``ChangeNotifications/TableCommit`` per table, when the transaction's end
///   marker arrives (or, should it not, the next transaction's notifications, or 50 ms without
///   more).
/// - A lost connection is opened again (after 50 ms, doubling up to 2 s); once it listens again,
///   every subscriber is told (``ChangeSubscriber/resumed()``), so nothing is missed silently.
/// - The last subscriber leaving closes the connection.
final class Listener: @unchecked Sendable {  // mutable state is guarded by `lock`; deliveries are serialized by `delivery`
    private let address: Postgres.Address
    private let lock = NSLock()
    private let delivery = NSLock()
    private var subscribers: [ObjectIdentifier: any ChangeSubscriber] = [:]
    private var runner: Task<Void, Never>?
    /// Which runner is the current one: a runner that was cancelled (the last subscriber left)
    /// may still be ending while a new one starts, and must not touch the new one's state.
    private var generation = 0
    private var isListening = false
    private var hasListened = false
    private var waiters: [UUID: CheckedContinuation<Void, any Error>] = [:]
    private var isStopped = false
    /// The notifications of the transaction being received.
    private var pending: (transaction: String, statements: [(table: String, statement: ChangeNotifications.Statement)])?
    private var lastArrival = ContinuousClock.now
    /// Whether a task waits for the quiet period to hand the pending transaction on.
    private var isFlusherRunning = false
    /// The schema whose tables are observed (the database's current schema, learned when the
    /// triggers are installed); notifications of other schemas' tables are ignored.
    private var followedSchema: String?

    static let quietPeriod = Duration.milliseconds(50)

    init(address: Postgres.Address) {
        self.address = address
    }

    /// Adds a subscriber and returns once the connection listens (so that a read made after this
    /// returns misses no later commit). Throws when the connection cannot be opened.
    func subscribe(_ subscriber: any ChangeSubscriber) async throws {
        let id = UUID()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome = lock.withLock { () -> Result<Void, any Error>? in
                    if isStopped { return .failure(Postgres.Error(.closed, message: "the database is closed")) }
                    if Task.isCancelled { return .failure(CancellationError()) }
                    subscribers[ObjectIdentifier(subscriber)] = subscriber
                    if runner == nil {
                        // A new connection for new subscribers: nothing was lost yet.
                        hasListened = false
                        generation += 1
                        let current = generation
                        runner = Task { [weak self] in
                            guard let self else { return }
                            await run(generation: current)
                        }
                    }
                    if isListening { return .success(()) }
                    waiters[id] = continuation
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            lock.withLock { waiters.removeValue(forKey: id) }?.resume(throwing: CancellationError())
        }
    }

    /// Takes only the notifications of tables in `schema` from now on.
    func follow(schema: String) {
        lock.withLock { followedSchema = schema }
    }

    /// Removes a subscriber; the last one closes the connection.
    func unsubscribe(_ subscriber: any ChangeSubscriber) {
        let task = lock.withLock { () -> Task<Void, Never>? in
            subscribers.removeValue(forKey: ObjectIdentifier(subscriber))
            guard subscribers.isEmpty, waiters.isEmpty else { return nil }
            defer { runner = nil; isListening = false; generation += 1 }
            return runner
        }
        task?.cancel()
    }

    /// Closes the connection for good (the database closed): every observation ends.
    func stop() {
        let (task, waiting, ending) = lock.withLock { () -> (Task<Void, Never>?, [CheckedContinuation<Void, any Error>], [any ChangeSubscriber]) in
            isStopped = true
            defer { runner = nil; waiters = [:]; subscribers = [:]; generation += 1 }
            return (runner, Array(waiters.values), Array(subscribers.values))
        }
        task?.cancel()
        for waiter in waiting { waiter.resume(throwing: Postgres.Error(.closed, message: "the database is closed")) }
        for subscriber in ending { subscriber.databaseClosed() }
    }

    // MARK: The connection

    private func run(generation current: Int) async {
        var delay = Duration.milliseconds(50)
        while !Task.isCancelled {
            do {
                let connection = try await PostgresConnection.connect(
                    configuration: address.connectionConfiguration, id: 1, logger: Postgres.Database.logger)
                do {
                    try await connection.listen(on: ChangeNotifications.channel) { notifications in
                        guard listening(generation: current) else { return }
                        delay = .milliseconds(50)
                        let heartbeat = Task { [weak self] in await self?.keepAlive(connection) }
                        defer { heartbeat.cancel() }
                        for try await notification in notifications {
                            guard isCurrent(current) else { return }
                            received(notification.payload)
                        }
                    }
                } catch {
                    try? await connection.close()
                    throw error
                }
                try? await connection.close()
            } catch {
                if Task.isCancelled { break }
                if isCurrent(current) {
                    failWaiters(with: Postgres.Error.from(error, sql: "LISTEN \(ChangeNotifications.channel)", isClosed: false))
                }
            }
            lock.withLock { if generation == current { isListening = false } }
            guard (try? await Task.sleep(for: delay)) != nil else { break }
            delay = min(delay * 2, .seconds(2))
        }
        lock.withLock { if generation == current { isListening = false } }
    }

    /// How often the listening connection is asked to answer, and how long it has to: a
    /// connection that died without the socket noticing (a NAT that forgot it, a pulled cable)
    /// would otherwise leave observations quiet for good. (Read when a connection starts
    /// listening; tests shorten it.)
    let heartbeat = Locked<(interval: Duration, timeout: Duration)>((.seconds(30), .seconds(10)))

    /// Asks the connection `SELECT 1` every ``heartbeat`` interval and closes it when the answer
    /// does not come in time: its notifications then end and the connection is opened again
    /// (and every subscriber reads again), as after any loss. Returns when cancelled.
    private func keepAlive(_ connection: PostgresConnection) async {
        let (interval, timeout) = heartbeat.withLock { $0 }
        while (try? await Task.sleep(for: interval)) != nil {
            let answered = Locked(false)
            let probe = Task {
                if (try? await connection.query("SELECT 1", logger: Postgres.Database.logger).collect()) != nil {
                    answered.withLock { $0 = true }
                }
            }
            let deadline = ContinuousClock.now + timeout
            while !answered.withLock({ $0 }), ContinuousClock.now < deadline {
                guard (try? await Task.sleep(for: .milliseconds(50))) != nil else {
                    probe.cancel()
                    return
                }
            }
            guard answered.withLock({ $0 }) else {
                probe.cancel()
                try? await connection.close()
                return
            }
        }
    }

    private func isCurrent(_ runnerGeneration: Int) -> Bool {
        lock.withLock { generation == runnerGeneration }
    }

    /// The connection listens: wakes the subscribers waiting for it, and after a loss tells every
    /// subscriber to read again. `false` when this runner is no longer the current one.
    private func listening(generation current: Int) -> Bool {
        let state = lock.withLock { () -> ([CheckedContinuation<Void, any Error>], [any ChangeSubscriber])? in
            guard generation == current else { return nil }
            isListening = true
            defer { waiters = [:]; hasListened = true }
            return (Array(waiters.values), hasListened ? Array(subscribers.values) : [])
        }
        guard let (waiting, resumedSubscribers) = state else { return false }
        for waiter in waiting { waiter.resume() }
        // A transaction received in part before the loss is handed on first.
        flush()
        delivery.withLock { for subscriber in resumedSubscribers { subscriber.resumed() } }
        return true
    }

    private func failWaiters(with error: any Error) {
        let waiting = lock.withLock { () -> [CheckedContinuation<Void, any Error>] in
            defer { waiters = [:] }
            return Array(waiters.values)
        }
        for waiter in waiting { waiter.resume(throwing: error) }
    }

    // MARK: Notifications

    private func received(_ payload: String) {
        let data = Data(payload.utf8)
        // Someone else's notification on our channel: not ours to understand.
        guard let header = try? JSONDecoder().decode(ChangeNotifications.Header.self, from: data) else { return }
        // A table of the same name in another schema of the database.
        if let schema = header.s, let mine = lock.withLock({ followedSchema }), schema != mine { return }
        let statement = ChangeNotifications.Statement(kind: header.e, payload: data)
        delivery.withLock {
            let targets = lock.withLock { subscribers.values.filter { !$0.wantsWholeTransactions && $0.tables.contains(header.t) } }
            let commit = ChangeNotifications.TableCommit(table: header.t, statements: [statement])
            for subscriber in targets { subscriber.committed(commit) }
        }
        group(statement, of: header)
    }

    /// Adds a statement to its transaction's group, handing the previous transaction's on first;
    /// the transaction's end marker hands its group on.
    private func group(_ statement: ChangeNotifications.Statement, of header: ChangeNotifications.Header) {
        if statement.kind == "." {
            flush()
            return
        }
        let startFlusher = lock.withLock { () -> Bool? in
            if let pending, pending.transaction != header.x { return nil }
            if pending == nil { pending = (header.x, []) }
            pending?.statements.append((header.t, statement))
            lastArrival = .now
            guard !isFlusherRunning else { return false }
            isFlusherRunning = true
            return true
        }
        guard let startFlusher else {
            // Another transaction's: the one received so far is complete.
            flush()
            return group(statement, of: header)
        }
        if startFlusher {
            Task { [weak self] in
                guard let self else { return }
                await flushWhenQuiet()
            }
        }
    }

    private func flushWhenQuiet() async {
        while true {
            if (try? await Task.sleep(for: Self.quietPeriod)) == nil {
                // Cancelled (never, today): hand on what arrived rather than strand it.
                lock.withLock { isFlusherRunning = false }
                flush()
                return
            }
            if flush(onlyIfQuiet: true) { return }
        }
    }

    /// Hands the transaction received so far to the subscribers of the tables it changed. With
    /// `onlyIfQuiet`, only when nothing arrived for the quiet period (then this flusher is done:
    /// `true`); the check and the taking are one critical section, so a transaction arriving
    /// meanwhile is never cut in two.
    @discardableResult
    private func flush(onlyIfQuiet: Bool = false) -> Bool {
        delivery.withLock {
            let taken = lock.withLock { () -> ([String: [ChangeNotifications.Statement]], [any ChangeSubscriber])? in
                if onlyIfQuiet {
                    guard ContinuousClock.now - lastArrival >= Self.quietPeriod else { return nil }
                    isFlusherRunning = false
                }
                guard let received = pending else { return ([:], []) }
                pending = nil
                return (Dictionary(grouping: received.statements, by: \.table).mapValues { $0.map(\.statement) }, Array(subscribers.values))
            }
            guard let (commit, targets) = taken else { return false }
            for subscriber in targets where subscriber.wantsWholeTransactions {
                for table in subscriber.tables.sorted() {
                    guard let statements = commit[table] else { continue }
                    subscriber.committed(ChangeNotifications.TableCommit(table: table, statements: statements))
                }
            }
            return true
        }
    }
}
#endif
