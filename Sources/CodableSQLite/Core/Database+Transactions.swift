extension SQLite.Database {
    /// Runs `block` in a transaction and returns its value.
    ///
    /// The transaction commits when the block returns. When the block throws, everything it
    /// wrote is rolled back and the error is rethrown. Calls made on this database inside the
    /// block, from the same thread, run on the transaction and see its writes. A nested call
    /// is a savepoint: its failure rolls back only its own writes, if the outer block catches it.
    ///
    /// ```swift
    /// let count = try db.inTransaction {
    ///     try db.write("INSERT INTO t (name) VALUES ('a')")
    ///     try db.write("INSERT INTO t (name) VALUES ('b')")
    ///     return try db.read("SELECT count(*) AS n FROM t")[0]["n"]?.intValue ?? 0
    /// }
    /// ```
    @available(*, noasync, message: "blocks its thread; in async code call the async form with await. Top-level code (main.swift) that awaits gets this form even with await: move the calls into an async function")
    @discardableResult
    public func inTransaction<R>(_ block: () throws -> R) throws -> R {
        try withWriter { connection in
            try connection.inTransaction(block)
        }
    }

    /// Whether the calling thread is inside a transaction on this database, such as an
    /// `inTransaction(_:)` block.
    ///
    /// ```swift
    /// db.hasOpenTransactions                          // false
    /// try db.inTransaction { db.hasOpenTransactions }  // true
    /// ```
    public var hasOpenTransactions: Bool {
        guard let connection = HeldConnections.current.connection(of: ObjectIdentifier(self)),
              connection === writer
        else { return false }
        return !connection.isAutocommit
    }
}
