/// Told when the writer's transactions end: the one channel through which Core tells the layers
/// above about commits and rollbacks. The model registry keeps its prepared tables consistent
/// with what was committed; observation hears what each commit changed.
///
/// Register with ``SQLite/Database/addTransactionObserver(_:)``. Calls arrive on the thread that
/// ended the transaction while it holds the writer: keep them short, never call back into the
/// database from them.
protocol TransactionObserver: AnyObject, Sendable {
    /// An `inTransaction(_:)` transaction committed.
    func transactionDidCommit()
    /// A transaction, or an `inTransaction(_:)` savepoint, rolled back (whoever ended it).
    func transactionDidRollBack()
    /// A commit made these changes durable: after every commit that changed something, while
    /// the writer tracks changes (``SQLite/Database/startTrackingChanges()``), once the commit is
    /// complete.
    func changesDidCommit(_ changes: DatabaseChanges)
}

extension TransactionObserver {
    func transactionDidCommit() {}
    func transactionDidRollBack() {}
    func changesDidCommit(_ changes: DatabaseChanges) {}
}

extension Locked where Value == [any TransactionObserver] {
    /// Tells every registered observer of an event, outside the lock (an observer may register
    /// another).
    func notify(_ event: (any TransactionObserver) -> Void) {
        for observer in withLock({ $0 }) { event(observer) }
    }
}
