import CSQLite
import Foundation

/// What the writer's transactions change, collected while someone observes the database.
///
/// Three SQLite hooks feed it, with no blind spot between them:
/// - the **authorizer**, at prepare time, lists the tables and columns each statement may write
///   (triggers and foreign-key actions are compiled into the statement, so theirs too), and
///   disables the truncate optimisation of `DELETE FROM t`, which would skip the update hook;
/// - the **update hook** names each changed row of a rowid table;
/// - the **commit and rollback hooks** end a transaction's collection: committed changes are
///   handed to `publish` once the commit is complete, rolled-back ones are dropped;
/// - the authorizer also tells which statements open, release and roll back to savepoints (the
///   library's nested `inTransaction(_:)` blocks and savepoints written in SQL alike): the changes
///   made since a savepoint that is rolled back to are dropped, so that a commit reports only what
///   it made durable.
///
/// Installed on the writer only, and only while observations exist, so that writes nobody
/// observes pay nothing for it. (The commit hook is the writer's own, which also refuses commits
/// into a moved file: `RawConnection+CommitHook.swift`; it forwards to the tracker when one is set.)
final class ChangeTracker {
    /// Called on the writer's thread, after each commit that changed something.
    let publish: (DatabaseChanges) -> Void
    /// What the open transaction changed so far, per savepoint: the first level is the
    /// transaction's outside any savepoint, each further one what happened since a savepoint
    /// still open began. Rolling back to a savepoint empties its level; releasing it merges its
    /// level (and those above) into the one below; the commit merges them all.
    private var levels = [Level(name: nil)]
    /// Changes whose COMMIT started (the commit hook ran) but is not known to be complete.
    private var committing: [DatabaseChanges] = []
    /// The statements running on the writer, outermost first, and whether their writes were noted.
    private var executions: [(statement: Statement, isNoted: Bool)] = []

    /// The changes made since a savepoint began (or since the transaction began).
    private struct Level {
        /// The savepoint's name, lower-cased (SQLite compares them so); `nil` for the transaction.
        var name: String?
        var changes = DatabaseChanges()
        /// Tables whose changed rows the update hook cannot name: `WITHOUT ROWID` tables
        /// statements wrote, and tables dropped or altered.
        var unnamedRowTables: Set<String> = []
    }

    /// The level changes go to now.
    private var top: Int { levels.count - 1 }

    init(publish: @escaping (DatabaseChanges) -> Void) {
        self.publish = publish
    }

    /// The last table name the update hook gave, as SQLite spelled it and lower-cased: one
    /// transaction usually changes one table, and the hook runs for every row.
    private var lastTable: (raw: [CChar], name: String)?

    /// A row of a rowid table changed (update hook).
    func noteRow(operation: Int32, table: UnsafePointer<CChar>, rowID: Int64) {
        let name: String
        if let lastTable, lastTable.raw.withUnsafeBufferPointer({ $0.baseAddress.map { strcmp($0, table) } }) == 0 {
            name = lastTable.name
        } else {
            let raw = Array(UnsafeBufferPointer(start: table, count: strlen(table) + 1))
            name = String(cString: table).lowercased()
            lastTable = (raw, name)
        }
        // In place: no copy of the sets per row.
        switch operation {
        case SQLITE_INSERT: levels[top].changes.tables[name, default: DatabaseChanges.Table()].inserted.insert(rowID)
        case SQLITE_DELETE: levels[top].changes.tables[name, default: DatabaseChanges.Table()].deleted.insert(rowID)
        default: levels[top].changes.tables[name, default: DatabaseChanges.Table()].updated.insert(rowID)
        }
    }

    /// A temporary trigger reported the key of a changed row (1 insert, 2 update (the key after),
    /// 3 delete, 4 update (the key before)).
    func noteKey(table: String, operation: Int32, key: SQLite.Value) {
        let name = table.lowercased()
        switch operation {
        case 1: levels[top].changes.tables[name, default: DatabaseChanges.Table()].insertedKeys.append(key)
        case 3: levels[top].changes.tables[name, default: DatabaseChanges.Table()].deletedKeys.append(key)
        case 4: levels[top].changes.tables[name, default: DatabaseChanges.Table()].updatedOldKeys.append(key)
        default: levels[top].changes.tables[name, default: DatabaseChanges.Table()].updatedKeys.append(key)
        }
    }

    /// A statement ran: what it may have written (the authorizer's view).
    func noteStatement(writes: [String: Set<String>?], withoutRowID: Set<String>, changesSchema: Bool) {
        for (table, columns) in writes {
            var changes = levels[top].changes.tables.removeValue(forKey: table) ?? DatabaseChanges.Table()
            if let columns, let known = changes.columns {
                changes.columns = known.union(columns)
            } else {
                changes.columns = nil
            }
            levels[top].changes.tables[table] = changes
            if changesSchema || withoutRowID.contains(table) { levels[top].unnamedRowTables.insert(table) }
        }
    }

    /// A `SAVEPOINT`, `RELEASE` or `ROLLBACK TO` statement completed: the library's own (nested
    /// `inTransaction(_:)`) or written in SQL.
    func noteSavepoint(_ savepoint: SavepointStatement) {
        let name = savepoint.name.lowercased()
        if savepoint.kind == .begin {
            levels.append(Level(name: name))
            return
        }
        // The most recent savepoint of that name. None: it was opened before the tracker, or the
        // RELEASE committed the transaction (the commit hook took every level already).
        guard let index = levels.lastIndex(where: { $0.name == name }), index > 0 else { return }
        if savepoint.kind == .rollback {
            // What happened since the savepoint began is undone; the savepoint stays open.
            levels.removeSubrange((index + 1)...)
            levels[index].changes = DatabaseChanges()
            levels[index].unnamedRowTables = []
        } else {
            while levels.count > index { merge(levels.removeLast(), into: top) }
        }
    }

    /// Adds a released savepoint's changes to those of the level below.
    private func merge(_ level: Level, into index: Int) {
        levels[index].unnamedRowTables.formUnion(level.unnamedRowTables)
        for (name, table) in level.changes.tables {
            levels[index].changes.tables[name, default: DatabaseChanges.Table()].formUnion(table)
        }
    }

    /// The commit hook: the transaction's changes are about to be committed.
    func transactionCommitting() {
        while levels.count > 1 { merge(levels.removeLast(), into: top) }
        let transaction = levels[0]
        levels = [Level(name: nil)]
        var changes = DatabaseChanges()
        for (name, var table) in transaction.changes.tables {
            let rowsNamed = !(table.inserted.isEmpty && table.updated.isEmpty && table.deleted.isEmpty)
            if transaction.unnamedRowTables.contains(name) {
                // Rows the update hook cannot name (WITHOUT ROWID), or a table dropped or altered.
                table.hasRowsWithoutRowID = true
            } else if !rowsNamed {
                continue   // the statements that could write this table changed no row
            }
            // Rows updated by something the authorizer did not describe: any column.
            if !table.updated.isEmpty && table.columns == [] { table.columns = nil }
            changes.tables[name] = table
        }
        if !changes.isEmpty { committing.append(changes) }
    }

    /// The rollback hook: nothing of the transaction, nor of a COMMIT that failed, happened.
    func transactionRolledBack() {
        levels = [Level(name: nil)]
        committing.removeAll()
    }

    /// Publishes what was committed, once no transaction is open any more (the COMMIT is done).
    func publishCommitted(isAutocommit: Bool) {
        guard isAutocommit, !committing.isEmpty else { return }
        let done = committing
        committing.removeAll()
        for changes in done { publish(changes) }
    }
}

extension ChangeTracker {
    /// A statement starts running on the writer.
    func beginExecution(of statement: Statement) {
        statement.completedSavepoint = false
        executions.append((statement, false))
    }

    /// After a statement ran: inside a transaction, what it wrote belongs to the transaction (an
    /// autocommit statement was noted by the commit hook already); a completed commit is
    /// published. A tracker no longer installed (`isInstalled` false) only forgets the statement.
    func endExecution(isAutocommit: Bool, isInstalled: Bool) {
        guard let last = executions.indices.last else { return }
        if isInstalled, !isAutocommit { noteExecution(at: last) }
        let statement = executions.removeLast().statement
        guard isInstalled else { return }
        if let savepoint = statement.savepoint, statement.completedSavepoint {
            statement.completedSavepoint = false
            noteSavepoint(savepoint)
        }
        publishCommitted(isAutocommit: isAutocommit)
    }

    /// Called by the commit hook: the running statements' writes are part of what commits.
    func noteRunningStatements() {
        for index in executions.indices { noteExecution(at: index) }
    }

    private func noteExecution(at index: Int) {
        guard !executions[index].isNoted else { return }
        executions[index].isNoted = true
        let statement = executions[index].statement
        // Whether rows changed is for the update hook to say (the change counter is only updated
        // after the commit hook); the authorizer tells which columns, and about the tables whose
        // rows the hook cannot name.
        if let writes = statement.writes, !writes.isEmpty {
            noteStatement(writes: writes, withoutRowID: statement.writesWithoutRowID, changesSchema: statement.changesSchema)
        }
    }
}

/// A statement that opens, releases or rolls back to a savepoint, as the authorizer saw it.
struct SavepointStatement {
    enum Kind { case begin, release, rollback }
    let kind: Kind
    /// As written (SQLite compares savepoint names case-insensitively).
    let name: String
}

extension DatabaseChanges.Table {
    /// Adds the changes of a later savepoint of the same transaction.
    mutating func formUnion(_ other: DatabaseChanges.Table) {
        inserted.formUnion(other.inserted)
        updated.formUnion(other.updated)
        deleted.formUnion(other.deleted)
        if let mine = columns, let theirs = other.columns {
            columns = mine.union(theirs)
        } else {
            columns = nil
        }
        hasRowsWithoutRowID = hasRowsWithoutRowID || other.hasRowsWithoutRowID
        insertedKeys += other.insertedKeys
        updatedKeys += other.updatedKeys
        updatedOldKeys += other.updatedOldKeys
        deletedKeys += other.deletedKeys
    }
}

/// What the authorizer collects while one statement is prepared.
struct PreparedRegion {
    /// What the statement reads.
    var reads = DatabaseRegion()
    /// Per table (lower-cased): the columns it writes, or `nil` for whole rows (INSERT, DELETE,
    /// and tables it drops or alters).
    var writes: [String: Set<String>?] = [:]
    /// Whether it drops or alters a table: it changes what readers see without changing rows.
    var changesSchema = false
    /// What it does to a savepoint, when it is `SAVEPOINT`, `RELEASE` or `ROLLBACK TO`.
    var savepoint: SavepointStatement?
}

extension PreparedRegion {
    /// The statement writes `column` of `table`, or whole rows when `column` is `nil`.
    mutating func noteWrite(table: String, column: String?) {
        let table = table.lowercased()
        guard let column else {
            writes[table] = .some(nil)
            return
        }
        switch writes[table] {
        case .none: writes[table] = .some([column.lowercased()])
        case .some(.none): break
        case .some(.some(var columns)):
            columns.insert(column.lowercased())
            writes[table] = .some(columns)
        }
    }
}
