#if Postgres
// Both sides of sync in one import, for code that is both (tests, tools, a server that is also a
// device): the device (CodableSyncClient), the server (CodableSyncServer), and a device that
// reaches PostgreSQL directly, without HTTP. An app ships CodableSyncClient alone; a server
// imports CodableSyncServer.
@_exported import CodableSyncClient
@_exported import CodableSyncServer

extension SQLite.Sync {
    /// Syncs `local` with a PostgreSQL server it connects to directly (through
    /// ``Postgres/SyncServer``).
    ///
    /// Nothing is read or written yet: the first round prepares `local` (the outbox, the
    /// triggers on each model's table) and the server.
    ///
    /// - Throws: ``Error/Code/unsyncableModel`` for a model whose ids the database assigns,
    ///   that are neither `UUID` nor `String`, or whose relationships lead to a model that is
    ///   not synced, naming it; ``Error/Code/invalidArgument`` for a `batchSize` below 1.
    public convenience init(
        local: SQLite.Database, server: Postgres.Database, models: [any (Model & Sendable).Type],
        batchSize: Int = 500, pollInterval: Duration = .seconds(2)
    ) throws {
        let synced = try SyncedModel.all(models)
        try self.init(local: local, synced: synced, transport: Postgres.SyncServer(database: server, synced: synced),
                      batchSize: batchSize, pollInterval: pollInterval)
    }
}
#endif
