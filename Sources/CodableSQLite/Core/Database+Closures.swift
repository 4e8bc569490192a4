extension SQLite.Database {
    /// Runs `body` on a connection that sees the last committed state, for several reads from
    /// one consistent snapshot: every call `body` makes on the database it is given (SQL, the
    /// coders, models) runs on that connection. Inside a transaction on this thread, it is the
    /// transaction's connection.
    ///
    /// ```swift
    /// let (open, done) = try db.read { snapshot in
    ///     (try snapshot.read("SELECT count(*) AS n FROM tasks WHERE isCompleted = 0")[0]["n"],
    ///      try snapshot.read("SELECT count(*) AS n FROM tasks WHERE isCompleted = 1")[0]["n"])
    /// }
    /// ```
    ///
    /// A write made in `body` does not join the snapshot: it waits for the writer and commits on
    /// its own (group writes with ``inTransaction(_:)-(_)``).
    @available(*, noasync, message: "use the async form: try await db.read { snapshot in … }")
    public func read<R>(_ body: (SQLite.Database) throws -> R) throws -> R {
        try withReader { raw in
            try raw.inReadTransaction { try body(self) }
        }
    }

    /// Asynchronous ``read(_:)-(_)``: waits for a reader without blocking a thread, and runs
    /// `body` on that connection's own queue. Cancelling the task interrupts the running statement.
    ///
    /// ```swift
    /// let titles = try await db.read { snapshot in try snapshot.read("SELECT title FROM tasks").compactMap { $0["title"]?.stringValue } }
    /// ```
    public func read<R: Sendable>(_ body: @escaping @Sendable (SQLite.Database) throws -> R) async throws -> R {
        try await performRead { raw in
            try raw.inReadTransaction { try body(self) }
        }
    }

    /// Runs a synchronous `body` in one transaction on the writer's own queue, from async code
    /// (the synchronous form is ``inTransaction(_:)-(_)``): waits for the writer without blocking
    /// a thread; everything `body` does on the database it is given commits when it returns and
    /// rolls back when it throws or the task is cancelled.
    ///
    /// ```swift
    /// try await db.write { tx in
    ///     try tx.write("UPDATE accounts SET balance = balance - 10 WHERE id = 1")
    ///     try tx.write("UPDATE accounts SET balance = balance + 10 WHERE id = 2")
    /// }
    /// ```
    ///
    /// For an `async` body, ``inTransaction(_:)-(_)`` with `await`.
    @discardableResult
    public func write<R: Sendable>(_ body: @escaping @Sendable (SQLite.Database) throws -> R) async throws -> R {
        try await performWrite { raw in
            try raw.inTransaction { try body(self) }
        }
    }
}

extension RawConnection {
    /// Runs `body` in a read transaction on a reader, so every statement sees the same snapshot.
    /// On the writer (in-memory databases, or inside a transaction) nobody else can write
    /// meanwhile, and what the body's nested calls write must not be rolled back: it simply runs.
    func inReadTransaction<R>(_ body: () throws -> R) throws -> R {
        guard isQueryOnly, isAutocommit else { return try body() }
        try execute("BEGIN DEFERRED")
        defer { rollbackQuietly() }   // nothing was written: ending it is all that is left
        return try body()
    }
}
