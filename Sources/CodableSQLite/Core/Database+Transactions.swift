extension SQLite.Database {
    /// Runs `body` in a transaction and returns its value: the same shape as the async form and
    /// as `Postgres.Database`'s, `{ tx in … }`.
    ///
    /// The transaction commits when the body returns. When it throws, everything it wrote is
    /// rolled back and the error is rethrown. `tx` is this database: calls made on it inside the
    /// body, from the same thread, run on the transaction and see its writes. A nested call is a
    /// savepoint: its failure rolls back only its own writes, if the outer body catches it.
    ///
    /// ```swift
    /// let count = try db.inTransaction { tx in
    ///     try tx.write("INSERT INTO t (name) VALUES ('a')")
    ///     try tx.save(Person(name: "Bob"))
    ///     return try tx.count(Person.self)
    /// }
    /// ```
    @available(*, noasync, message: "blocks its thread; in async code call the async form with await. Top-level code (main.swift) that awaits gets this form even with await: move the calls into an async function")
    @discardableResult
    public func inTransaction<R>(_ body: (SQLite.Database) throws -> R) throws -> R {
        try withWriter { connection in
            try connection.inTransaction { try body(self) }
        }
    }

    /// Whether the calling thread is inside a transaction on this database, such as an
    /// `inTransaction(_:)` block.
    ///
    /// ```swift
    /// db.hasOpenTransactions                          // false
    /// try db.inTransaction { tx in tx.hasOpenTransactions }  // true
    /// ```
    public var hasOpenTransactions: Bool {
        guard let connection = HeldConnections.current.connection(of: ObjectIdentifier(self)),
              connection === writer
        else { return false }
        return !connection.isAutocommit
    }
}
