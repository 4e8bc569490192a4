import Foundation

/// The writer an async `inTransaction(_:)` body holds: the calls its task (and the task's
/// child tasks) make on the same database run on it, inside the transaction.
struct AsyncTransactionScope: Sendable {
    let database: ObjectIdentifier
    let connection: RawConnection

    @TaskLocal static var current: AsyncTransactionScope?
}

extension SQLite.Database {
    /// Runs an async `body` in one transaction: committed when it returns, rolled back when it
    /// throws or its task is cancelled. The spelling is the same as `Postgres.Database`'s, so code
    /// written against `ModelStore` runs on both.
    ///
    /// `body` gets this database: every call made on it from the body's task, and from that
    /// task's child tasks, runs inside the transaction and sees its writes (others wait for the
    /// writer until it ends; their reads see the last commit). A nested `inTransaction` is a
    /// savepoint: when it throws, only its writes are rolled back. Live queries and change
    /// batches hear of the transaction once, when it commits.
    ///
    /// ```swift
    /// try await db.inTransaction { tx in
    ///     let alice = try await tx.save(Person(name: "Alice"))
    ///     try await tx.save(Pet(name: "Rex", ownerID: alice.id))
    /// }
    /// ```
    ///
    /// Keep the body short: it holds the only writer while it awaits.
    @discardableResult
    public func inTransaction<R: Sendable>(_ body: (SQLite.Database) async throws -> R) async throws -> R {
        if let scope = AsyncTransactionScope.current, scope.database == ObjectIdentifier(self) {
            return try await runTransactionBlock(in: scope, body)
        }
        try Task.checkCancellation()
        let lease = try await writerPool.lease()
        let connection = try await open(lease, of: writerPool)
        defer { writerPool.release(connection) }
        return try await runTransactionBlock(in: AsyncTransactionScope(database: ObjectIdentifier(self), connection: connection), body)
    }

    /// Opens the transaction (or a savepoint, when nested), runs `body` with `scope` current,
    /// and commits, or rolls back when `body` throws or the task was cancelled.
    private func runTransactionBlock<R: Sendable>(
        in scope: AsyncTransactionScope, _ body: (SQLite.Database) async throws -> R
    ) async throws -> R {
        let connection = scope.connection
        let block = try await run(on: connection, inTransaction: true) { try $0.beginTransactionBlock() }
        let result: R
        do {
            result = try await AsyncTransactionScope.$current.withValue(scope) { try await body(self) }
            try Task.checkCancellation()
        } catch {
            _ = try? await run(on: connection, inTransaction: true, cancellable: false) { $0.rollBackTransactionBlock(block) }
            throw error
        }
        try await run(on: connection, inTransaction: true, cancellable: false) { try $0.commitTransactionBlock(block) }
        return result
    }
}
