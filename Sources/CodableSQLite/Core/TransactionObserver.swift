/// Told when the writer's transactions end, so that layers above Core can keep what they cache
/// (the model registry's prepared tables) consistent with what was committed.
///
/// Register with ``SQLite/Database/addTransactionObserver(_:)``. Calls arrive on the thread that
/// ended the transaction while it holds the writer: keep them short, never call back into the
/// database from them.
protocol TransactionObserver: AnyObject, Sendable {
    /// An `inTransaction(_:)` transaction committed.
    func transactionDidCommit()
    /// A transaction, or an `inTransaction(_:)` savepoint, rolled back (whoever ended it).
    func transactionDidRollBack()
}
