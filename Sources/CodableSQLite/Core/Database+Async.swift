import Dispatch

extension SQLite.Database {
    /// Runs `work` on one of the database's dispatch queues, so SQLite I/O never blocks the
    /// cooperative thread pool that runs Swift tasks.
    func perform<R: Sendable>(on queue: DispatchQueue, _ work: @escaping @Sendable () throws -> R) async throws -> R {
        try Task.checkCancellation()
        return try await withCheckedThrowingContinuation { continuation in
            queue.async {
                continuation.resume(with: Result(catching: work))
            }
        }
    }

    /// Asynchronous ``execute(raw:)``.
    ///
    /// ```swift
    /// try await db.execute(raw: "CREATE TABLE t (id INTEGER PRIMARY KEY)")
    /// ```
    @discardableResult
    public func execute(raw sql: SQL) async throws -> [SQLiteRow] {
        try await perform(on: writerQueue) { try self.execute(raw: sql) }
    }

    /// Asynchronous ``write(_:arguments:)-(_,SQLiteArguments)``.
    ///
    /// ```swift
    /// try await db.write("INSERT INTO t VALUES (:id)", arguments: ["id": .integer(1)])
    /// ```
    @discardableResult
    public func write(_ sql: SQL, arguments: SQLiteArguments = [:]) async throws -> [SQLiteRow] {
        try await perform(on: writerQueue) { try self.write(sql, arguments: arguments) }
    }

    /// Asynchronous ``write(_:arguments:)-(_,[SQLite.Value])``.
    ///
    /// ```swift
    /// try await db.write("INSERT INTO t VALUES (?)", arguments: [.integer(1)])
    /// ```
    @discardableResult
    public func write(_ sql: SQL, arguments: [SQLite.Value]) async throws -> [SQLiteRow] {
        try await perform(on: writerQueue) { try self.write(sql, arguments: arguments) }
    }

    /// Asynchronous ``read(_:arguments:)-(_,SQLiteArguments)``.
    ///
    /// ```swift
    /// let rows = try await db.read("SELECT * FROM t")
    /// ```
    public func read(_ sql: SQL, arguments: SQLiteArguments = [:]) async throws -> [SQLiteRow] {
        try await perform(on: readerQueue) { try self.read(sql, arguments: arguments) }
    }

    /// Asynchronous ``read(_:arguments:)-(_,[SQLite.Value])``.
    ///
    /// ```swift
    /// let rows = try await db.read("SELECT ? + ?", arguments: [.integer(1), .integer(2)])
    /// ```
    public func read(_ sql: SQL, arguments: [SQLite.Value]) async throws -> [SQLiteRow] {
        try await perform(on: readerQueue) { try self.read(sql, arguments: arguments) }
    }

    /// Asynchronous `inTransaction(_:)`: the block runs synchronously on the database's
    /// writer queue, where calls made on the database join the transaction.
    ///
    /// ```swift
    /// let n = try await db.inTransaction {
    ///     try db.write("INSERT INTO t DEFAULT VALUES")
    ///     return 42
    /// }
    /// ```
    @discardableResult
    public func inTransaction<R: Sendable>(_ block: @escaping @Sendable () throws -> R) async throws -> R {
        try await perform(on: writerQueue) { try self.inTransaction(block) }
    }
}
