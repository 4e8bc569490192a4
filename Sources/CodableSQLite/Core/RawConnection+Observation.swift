import CSQLite
import Foundation

/// The hooks live queries need from a connection: the tables and columns a query reads, what the
/// writer's transactions change, and whether another connection committed.
extension RawConnection {
    /// Starts collecting what this (writer) connection's transactions change. Call it while no
    /// transaction is open. Statements prepared before are dropped from the cache, so that each
    /// is prepared again under the authorizer.
    func startTrackingChanges(_ tracker: ChangeTracker) {
        self.tracker = tracker
        statements.removeAll()
        installAuthorizer()
        let context = Unmanaged.passUnretained(self).toOpaque()
        sqlite3_update_hook(handle, { context, operation, database, table, rowID in
            guard let context, let database, let table, strcmp(database, "main") == 0 else { return }
            let connection = Unmanaged<RawConnection>.fromOpaque(context).takeUnretainedValue()
            connection.tracker?.noteRow(operation: operation, table: table, rowID: rowID)
        }, context)
        // The writer's commit hook (RawConnection+CommitHook.swift) tells the tracker what commits.
    }

    /// Stops collecting changes; writes cost nothing extra again.
    func stopTrackingChanges() {
        tracker = nil
        sqlite3_update_hook(handle, nil, nil)
        sqlite3_set_authorizer(handle, nil, nil)
        // Statements prepared under the authorizer skip the truncate optimisation: start afresh.
        statements.removeAll()
    }

    /// After a statement began on `tracker` (the tracker installed then) ran.
    func endExecution(on tracker: ChangeTracker) {
        tracker.endExecution(isAutocommit: isAutocommit, isInstalled: self.tracker === tracker)
    }

    /// Gives a statement just prepared on a tracked writer what the authorizer found it writes.
    func noteWrites(of statement: Statement) {
        guard let region = preparedRegion else { return }
        preparedRegion = nil
        statement.writes = region.writes
        statement.changesSchema = region.changesSchema
        statement.savepoint = region.savepoint
        if !region.writes.isEmpty { statement.writesWithoutRowID = withoutRowIDTables().intersection(region.writes.keys) }
    }

    /// The `WITHOUT ROWID` tables of the main database (lower-cased), whose changes the update hook
    /// does not report. A false positive only costs an extra notification.
    private func withoutRowIDTables() -> Set<String> {
        var tables: Set<String> = []
        var statement: OpaquePointer?
        let sql = "SELECT lower(name) FROM sqlite_schema WHERE type = 'table' AND lower(sql) LIKE '%without%rowid%'"
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK, let statement else { return [] }
        defer { sqlite3_finalize(statement) }
        while sqlite3_step(statement) == SQLITE_ROW {
            if let name = sqlite3_column_text(statement, 0) { tables.insert(String(cString: name)) }
        }
        return tables
    }

    /// The tables and columns `sql` reads, from SQLite's authorizer while preparing it.
    func readRegion(of sql: String) throws -> DatabaseRegion {
        let installed = tracker != nil
        if !installed { installAuthorizer() }
        defer { if !installed { sqlite3_set_authorizer(handle, nil, nil) } }
        preparedRegion = PreparedRegion()
        defer { preparedRegion = nil }
        var prepared: OpaquePointer?
        let resultCode = sqlite3_prepare_v2(handle, sql, -1, &prepared, nil)
        sqlite3_finalize(prepared)
        guard resultCode == SQLITE_OK else { throw SQLite.Error(connection: handle, resultCode: resultCode, sql: sql) }
        return preparedRegion?.reads ?? DatabaseRegion()
    }

    /// SQLite's `PRAGMA data_version`: it changes when another connection (of this process or
    /// another) commits, never for this connection's own commits.
    func dataVersion() throws -> Int64 {
        try withStatement("PRAGMA data_version") { statement in
            guard try statement.step() else { return 0 }
            return statement.int64(at: 0)
        }
    }

    private func installAuthorizer() {
        sqlite3_set_authorizer(handle, { context, action, first, second, database, _ in
            guard let context else { return SQLITE_OK }
            let connection = Unmanaged<RawConnection>.fromOpaque(context).takeUnretainedValue()
            return connection.authorize(action: action, first: first, second: second, database: database)
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Records what a statement being prepared reads and writes in the main database.
    private func authorize(action: Int32, first: UnsafePointer<CChar>?, second: UnsafePointer<CChar>?, database: UnsafePointer<CChar>?) -> Int32 {
        // The database's name is the third argument, except for ALTER TABLE, which passes it first.
        let databaseName = action == SQLITE_ALTER_TABLE ? first : database
        guard let first, databaseName.map({ strcmp($0, "main") == 0 }) ?? true else { return SQLITE_OK }
        switch action {
        case SQLITE_READ:
            preparedRegion?.reads.insert(table: String(cString: first), column: second.map { String(cString: $0) })
        case SQLITE_INSERT:
            preparedRegion?.noteWrite(table: String(cString: first), column: nil)
        case SQLITE_UPDATE:
            preparedRegion?.noteWrite(table: String(cString: first), column: second.map { String(cString: $0) })
        case SQLITE_DELETE:
            let table = String(cString: first)
            guard !table.hasPrefix("sqlite_") else { return SQLITE_OK }
            preparedRegion?.noteWrite(table: table, column: nil)
            // IGNORE on a DELETE statement turns off the truncate optimisation, which deletes
            // every row without telling the update hook; the DELETE itself still runs. Not in a
            // DROP TABLE (announced first), which IGNORE would silently skip.
            if tracker != nil, preparedRegion?.changesSchema == false { return SQLITE_IGNORE }
        case SQLITE_DROP_TABLE:
            preparedRegion?.noteWrite(table: String(cString: first), column: nil)
            preparedRegion?.changesSchema = true
        case SQLITE_SAVEPOINT:
            // The operation first ("BEGIN", "RELEASE" or "ROLLBACK"), then the savepoint's name.
            guard let second else { break }
            let kinds: [String: SavepointStatement.Kind] = ["BEGIN": .begin, "RELEASE": .release, "ROLLBACK": .rollback]
            if let kind = kinds[String(cString: first)] {
                preparedRegion?.savepoint = SavepointStatement(kind: kind, name: String(cString: second))
            }
        case SQLITE_ALTER_TABLE:
            // The first argument is the database's name here, the second the table's.
            if let second { preparedRegion?.noteWrite(table: String(cString: second), column: nil) }
            preparedRegion?.changesSchema = true
        default:
            break
        }
        return SQLITE_OK
    }
}
