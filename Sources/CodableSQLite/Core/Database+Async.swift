import Dispatch
import Foundation

extension SQLite.Database {
    /// Runs `work` with the writer, off the cooperative thread pool (see ``perform(on:_:)``).
    func performWrite<R: Sendable>(_ work: @escaping @Sendable (RawConnection) throws -> R) async throws -> R {
        try await perform(on: writerPool, work)
    }

    /// Runs `work` with a reader (the writer for in-memory databases), off the cooperative pool.
    func performRead<R: Sendable>(_ work: @escaping @Sendable (RawConnection) throws -> R) async throws -> R {
        try await perform(on: readerPool ?? writerPool, work)
    }

    /// Runs `work` on a connection of `pool`, on that connection's own serial queue.
    ///
    /// Waiting for a connection suspends the task; no thread is blocked. Cancelling the task
    /// while it waits removes it from the queue; cancelling it while `work` runs interrupts SQLite
    /// (`sqlite3_interrupt`), and either way the call throws `CancellationError`. Calls that
    /// `work` makes on this database run inline on the same connection. Inside the body of an
    /// async `inTransaction(_:)` on this database, `work` runs on that transaction's writer.
    private func perform<R: Sendable>(on pool: ConnectionPool, _ work: @escaping @Sendable (RawConnection) throws -> R) async throws -> R {
        if let scope = AsyncTransactionScope.current, scope.database == ObjectIdentifier(self) {
            return try await run(on: scope.connection, inTransaction: true) { connection in
                try connection.checkBlockTransactionIsOpen()
                return try work(connection)
            }
        }
        try Task.checkCancellation()
        let lease = try await pool.lease()
        let connection = try await open(lease, of: pool)
        return try await run(on: connection, inTransaction: false, work, then: { pool.release($0) })
    }

    /// The connection `lease` stands for; a new one is opened off the cooperative pool.
    func open(_ lease: ConnectionPool.Lease, of pool: ConnectionPool) async throws -> RawConnection {
        if case .connection(let connection) = lease { return connection }
        // A connection still to be opened gets a serial queue of its own: serial queues get a
        // thread when they need one, where the global queue waits for a free core.
        // The connection is handed over through a lock, not only the continuation: the lock
        // orders its initialisation before every later use on other threads in a way
        // ThreadSanitizer can see (it does not see the concurrency runtime's resumption).
        let opened = Locked<RawConnection?>(nil)
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            DispatchQueue(label: "CodableSQLite.open").async {
                do {
                    let connection = try pool.connection(for: lease)
                    opened.withLock { $0 = connection }
                    continuation.resume()
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
        guard let connection = opened.withLock({ $0 }) else {
            throw SQLite.Error(code: .misuse, message: "CodableSQLite internal error: a connection was opened but not handed over")
        }
        return connection
    }

    /// Runs `work` on `connection`'s serial queue, with the connection held by that thread for
    /// this database (so that the calls `work` makes run inline), then calls `then`.
    ///
    /// A top-level use (`inTransaction: false`) must leave no transaction open (see
    /// ``run(_:on:)``). `cancellable: false` is for the rollback and commit that end an async
    /// transaction, which must run even when the task was cancelled.
    func run<R: Sendable>(
        on connection: RawConnection, inTransaction: Bool, cancellable: Bool = true,
        _ work: @escaping @Sendable (RawConnection) throws -> R,
        then: @escaping @Sendable (RawConnection) -> Void = { _ in }
    ) async throws -> R {
        let access = AsyncAccess()
        let database = ObjectIdentifier(self)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<R, any Error>) in
                connection.queue.async {
                    guard !cancellable || access.begin(on: connection) else {
                        then(connection)
                        continuation.resume(throwing: CancellationError())
                        return
                    }
                    let held = HeldConnections.current
                    held.push(connection, of: database)
                    let result = Result { inTransaction ? try work(connection) : try Self.run(work, on: connection) }
                    held.pop()
                    let wasCancelled = cancellable && access.end(on: connection)
                    then(connection)
                    if wasCancelled, case .failure = result {
                        continuation.resume(throwing: CancellationError())
                    } else {
                        continuation.resume(with: result)
                    }
                }
            }
        } onCancel: {
            access.cancel()
        }
    }

    /// Asynchronous ``execute(raw:)``.
    ///
    /// ```swift
    /// try await db.execute(raw: "CREATE TABLE t (id INTEGER PRIMARY KEY)")
    /// ```
    @discardableResult
    public func execute(raw sql: String) async throws -> [SQLiteRow] {
        try await performWrite { _ in try self.execute(raw: sql) }
    }

    /// Asynchronous `write(_:arguments:)`.
    ///
    /// ```swift
    /// try await db.write("INSERT INTO t VALUES (:id)", arguments: ["id": .integer(1)])
    /// ```
    @discardableResult
    public func write(_ sql: String, arguments: SQLiteArguments = [:]) async throws -> [SQLiteRow] {
        try await performWrite { _ in try self.write(sql, arguments: arguments) }
    }

    /// Asynchronous `write(_:arguments:)` with positional arguments.
    ///
    /// ```swift
    /// try await db.write("INSERT INTO t VALUES (?)", arguments: [.integer(1)])
    /// ```
    @discardableResult
    package func write(_ sql: String, arguments: [SQLite.Value]) async throws -> [SQLiteRow] {
        try await performWrite { _ in try self.write(sql, arguments: arguments) }
    }

    /// Asynchronous `read(_:arguments:)`.
    ///
    /// ```swift
    /// let rows = try await db.read("SELECT * FROM t")
    /// ```
    public func read(_ sql: String, arguments: SQLiteArguments = [:]) async throws -> [SQLiteRow] {
        try await performRead { _ in try self.read(sql, arguments: arguments) }
    }

    /// Asynchronous `read(_:arguments:)` with positional arguments.
    ///
    /// ```swift
    /// let rows = try await db.read("SELECT ? + ?", arguments: [.integer(1), .integer(2)])
    /// ```
    package func read(_ sql: String, arguments: [SQLite.Value]) async throws -> [SQLiteRow] {
        try await performRead { _ in try self.read(sql, arguments: arguments) }
    }
}

/// The link between a cancelled task and the connection running its work.
final class AsyncAccess: @unchecked Sendable {  // all state is guarded by `lock`
    private let lock = NSLock()
    private var isCancelled = false
    private var running: RawConnection?

    /// The task was cancelled: interrupt the work if it runs, refuse it if it has not started.
    func cancel() {
        lock.withLock {
            isCancelled = true
            running?.interrupt()
        }
    }

    /// Marks the work as running on `connection`; `false` when the task is already cancelled.
    func begin(on connection: RawConnection) -> Bool {
        lock.withLock {
            guard !isCancelled else { return false }
            running = connection
            // Statements that start after a cancellation must stop too (sqlite3_interrupt only
            // reaches statements already running).
            connection.setCancellationCheck { [unowned self] in lock.withLock { isCancelled } }
            return true
        }
    }

    /// Marks the work as finished; whether the task was cancelled meanwhile.
    func end(on connection: RawConnection) -> Bool {
        lock.withLock {
            running = nil
            connection.setCancellationCheck(nil)
            return isCancelled
        }
    }
}
