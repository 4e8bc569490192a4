extension SQLite.Database {
    /// Starts collecting what the writer's transactions change: after each commit that changed
    /// something, every ``TransactionObserver`` is told (``TransactionObserver/changesDidCommit(_:)``,
    /// on the writer's thread). Waits for the writer, so that tracking starts between transactions.
    func startTrackingChanges() throws {
        let tracker = ChangeTracker { [transactionObservers] changes in transactionObservers.notify { $0.changesDidCommit(changes) } }
        try withWriter { $0.startTrackingChanges(tracker) }
    }

    /// Stops collecting changes, unless `stillNeeded` (asked while holding the writer, where
    /// observers register) says an observer came meanwhile.
    func stopTrackingChanges(unless stillNeeded: () -> Bool) throws {
        try withWriter { writer in
            if !stillNeeded() { writer.stopTrackingChanges() }
        }
    }

    /// What `sql` reads, as SQLite's authorizer reports it while preparing the statement.
    func readRegion(of sql: String) throws -> DatabaseRegion {
        try withReader { try $0.readRegion(of: sql) }
    }

    /// The writer's `PRAGMA data_version`, which changes when another connection or process
    /// commits; `nil` when the writer is busy (the caller tries again later) or the database
    /// lives in memory (nobody else can write it).
    func externalDataVersion() -> Int64? {
        guard writer.isFileBacked else { return nil }
        if HeldConnections.current.connection(of: ObjectIdentifier(self)) === writer {
            return try? writer.dataVersion()   // this thread holds the writer already
        }
        guard let connection = writerPool.tryAcquire() else { return nil }
        defer { writerPool.release(connection) }
        return try? connection.dataVersion()
    }
}
