extension SQLite {
    /// One connection of a database, lent to a closure by `db.read { conn in … }` or
    /// `db.write { conn in … }` so that several statements run on it in a row.
    ///
    /// ```swift
    /// let (count, newest) = try db.read { conn in
    ///     let count = try conn.read("SELECT count(*) AS n FROM tasks")[0]["n"]?.intValue ?? 0
    ///     let newest = try conn.read("SELECT title FROM tasks ORDER BY rowid DESC LIMIT 1").first?["title"]
    ///     return (count, newest)   // both from the same snapshot of the database
    /// }
    /// try db.write { conn in
    ///     try conn.write("INSERT INTO tasks (id, title, isCompleted) VALUES ('a', 'A', 0)")
    ///     try conn.write("UPDATE counters SET n = n + 1")
    /// }   // one transaction: both or neither
    /// ```
    ///
    /// Everything else called on the database inside the closure (models, `SQLite.Encoder`,
    /// `SQLite.Decoder`) runs on this same connection too.
    ///
    /// Not `Sendable`: it belongs to the closure it was lent to, on that closure's thread; using it
    /// after the closure returns throws ``SQLite/Error`` with ``SQLite/ResultCode/misuse``.
    public struct Connection {
        let raw: RawConnection
        /// The database this connection belongs to.
        public let database: Database
        /// Whether statements that write are refused (the connection of a `read` closure).
        public let isReadOnly: Bool

        init(raw: RawConnection, database: Database, isReadOnly: Bool) {
            self.raw = raw
            self.database = database
            self.isReadOnly = isReadOnly
        }

        /// Throws unless this thread still holds the connection (the closure is still running).
        private func checkLent(_ sql: SQL) throws {
            guard HeldConnections.current.connection(of: ObjectIdentifier(database)) === raw else {
                throw SQLite.Error(
                    code: .misuse, message: "This connection was used outside the read { } or write { } closure it was lent to",
                    sql: sql)
            }
        }

        private func checkWritable(_ sql: SQL) throws {
            try checkLent(sql)
            if isReadOnly {
                throw SQLite.Error(code: .misuse, message: "A read { } closure cannot write; use write { } instead", sql: sql)
            }
        }

        /// Runs one read-only statement with named arguments and returns its rows.
        ///
        /// ```swift
        /// let rows = try db.read { conn in try conn.read("SELECT * FROM t WHERE id = :id", arguments: ["id": 1]) }
        /// ```
        public func read(_ sql: SQL, arguments: SQLiteArguments = [:]) throws -> [SQLiteRow] {
            try checkLent(sql)
            return try raw.rows(sql, arguments: arguments, readOnly: true)
        }

        /// Runs one read-only statement with positional (`?`) arguments and returns its rows.
        ///
        /// ```swift
        /// let rows = try db.read { conn in try conn.read("SELECT ? + ?", arguments: [1, 2]) }
        /// ```
        public func read(_ sql: SQL, arguments: [SQLite.Value]) throws -> [SQLiteRow] {
            try checkLent(sql)
            return try raw.rows(sql, arguments: arguments, readOnly: true)
        }

        /// Runs one statement that may write, with named arguments, and returns its rows.
        ///
        /// ```swift
        /// try db.write { conn in try conn.write("DELETE FROM t WHERE id = :id", arguments: ["id": 1]) }
        /// ```
        @discardableResult
        public func write(_ sql: SQL, arguments: SQLiteArguments = [:]) throws -> [SQLiteRow] {
            try checkWritable(sql)
            return try raw.rows(sql, arguments: arguments, readOnly: false)
        }

        /// Runs one statement that may write, with positional (`?`) arguments, and returns its rows.
        ///
        /// ```swift
        /// try db.write { conn in try conn.write("INSERT INTO t VALUES (?, ?)", arguments: [2, "b"]) }
        /// ```
        @discardableResult
        public func write(_ sql: SQL, arguments: [SQLite.Value]) throws -> [SQLiteRow] {
            try checkWritable(sql)
            return try raw.rows(sql, arguments: arguments, readOnly: false)
        }

        /// Runs every statement in `sql`, in order, and returns the rows of the last one.
        ///
        /// ```swift
        /// try db.write { conn in try conn.execute(raw: "DELETE FROM a; DELETE FROM b;") }
        /// ```
        @discardableResult
        public func execute(raw sql: SQL) throws -> [SQLiteRow] {
            try checkWritable(sql)
            return try raw.execute(sql)
        }

        /// Rows changed by the last INSERT, UPDATE or DELETE on this connection.
        ///
        /// ```swift
        /// let n = try db.write { conn in try conn.write("DELETE FROM t"); return conn.changes }
        /// ```
        public var changes: Int { raw.changes }
    }
}

@available(*, unavailable, message: "A connection belongs to the closure it was lent to")
extension SQLite.Connection: Sendable {}

extension SQLite.Database {
    /// Runs `body` with a connection that sees the last committed state, for several reads from
    /// one consistent snapshot. Inside a transaction on this thread, it is the transaction's
    /// connection.
    ///
    /// ```swift
    /// let (open, done) = try db.read { conn in
    ///     (try conn.read("SELECT count(*) AS n FROM tasks WHERE isCompleted = 0")[0]["n"],
    ///      try conn.read("SELECT count(*) AS n FROM tasks WHERE isCompleted = 1")[0]["n"])
    /// }
    /// ```
    @available(*, noasync, message: "use the async form: try await db.read { conn in … }")
    public func read<R>(_ body: (SQLite.Connection) throws -> R) throws -> R {
        try withReader { raw in
            try raw.inReadTransaction { try body(SQLite.Connection(raw: raw, database: self, isReadOnly: true)) }
        }
    }

    /// Runs `body` with the writer connection, in a transaction: everything it writes commits
    /// when it returns, and rolls back when it throws.
    ///
    /// ```swift
    /// try db.write { conn in
    ///     try conn.write("UPDATE accounts SET balance = balance - 10 WHERE id = 1")
    ///     try conn.write("UPDATE accounts SET balance = balance + 10 WHERE id = 2")
    /// }
    /// ```
    @available(*, noasync, message: "use the async form: try await db.write { conn in … }")
    @discardableResult
    public func write<R>(_ body: (SQLite.Connection) throws -> R) throws -> R {
        try withWriter { raw in
            try raw.inTransaction { try body(SQLite.Connection(raw: raw, database: self, isReadOnly: false)) }
        }
    }

    /// Asynchronous ``read(_:)-(_)``: waits for a reader without blocking a thread, and runs
    /// `body` on that connection's own queue. Cancelling the task interrupts the running statement.
    ///
    /// ```swift
    /// let titles = try await db.read { conn in try conn.read("SELECT title FROM tasks").compactMap { $0["title"]?.stringValue } }
    /// ```
    public func read<R: Sendable>(_ body: @escaping @Sendable (SQLite.Connection) throws -> R) async throws -> R {
        try await performRead { raw in
            try raw.inReadTransaction { try body(SQLite.Connection(raw: raw, database: self, isReadOnly: true)) }
        }
    }

    /// Asynchronous ``write(_:)-(_)``: waits for the writer without blocking a thread.
    ///
    /// ```swift
    /// try await db.write { conn in try conn.write("DELETE FROM tasks WHERE isCompleted = 1") }
    /// ```
    @discardableResult
    public func write<R: Sendable>(_ body: @escaping @Sendable (SQLite.Connection) throws -> R) async throws -> R {
        try await performWrite { raw in
            try raw.inTransaction { try body(SQLite.Connection(raw: raw, database: self, isReadOnly: false)) }
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
