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
///   handed to `publish` once the commit is complete, rolled-back ones are dropped.
///
/// Installed on the writer only, and only while observations exist, so that writes nobody
/// observes pay nothing for it. (The commit hook is the writer's own, which also refuses commits
/// into a moved file: `RawConnection+CommitHook.swift`; it forwards to the tracker when one is set.)
final class ChangeTracker {
    /// Called on the writer's thread, after each commit that changed something.
    let publish: (DatabaseChanges) -> Void
    /// This transaction's changes so far.
    private var pending = DatabaseChanges()
    /// Tables whose changed rows the update hook cannot name: `WITHOUT ROWID` tables statements
    /// wrote, and tables dropped or altered.
    private var unnamedRowTables: Set<String> = []
    /// Changes whose COMMIT started (the commit hook ran) but is not known to be complete.
    private var committing: [DatabaseChanges] = []

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
        var changes = pending.tables[name] ?? DatabaseChanges.Table()
        switch operation {
        case SQLITE_INSERT: changes.inserted.insert(rowID)
        case SQLITE_DELETE: changes.deleted.insert(rowID)
        default: changes.updated.insert(rowID)
        }
        pending.tables[name] = changes
    }

    /// A temporary trigger reported the key of a changed row (1 insert, 2 update, 3 delete).
    func noteKey(table: String, operation: Int32, key: SQLite.Value) {
        let name = table.lowercased()
        var changes = pending.tables[name] ?? DatabaseChanges.Table()
        switch operation {
        case 1: changes.insertedKeys.append(key)
        case 3: changes.deletedKeys.append(key)
        default: changes.updatedKeys.append(key)
        }
        pending.tables[name] = changes
    }

    /// A statement ran: what it may have written (the authorizer's view).
    func noteStatement(writes: [String: Set<String>?], withoutRowID: Set<String>, changesSchema: Bool) {
        for (table, columns) in writes {
            var changes = pending.tables[table] ?? DatabaseChanges.Table()
            if let columns, let known = changes.columns {
                changes.columns = known.union(columns)
            } else {
                changes.columns = nil
            }
            pending.tables[table] = changes
            if changesSchema || withoutRowID.contains(table) { unnamedRowTables.insert(table) }
        }
    }

    /// The commit hook: the transaction's changes are about to be committed.
    func transactionCommitting() {
        var changes = DatabaseChanges()
        for (name, var table) in pending.tables {
            let rowsNamed = !(table.inserted.isEmpty && table.updated.isEmpty && table.deleted.isEmpty)
            if unnamedRowTables.contains(name) {
                // Rows the update hook cannot name (WITHOUT ROWID), or a table dropped or altered.
                table.hasRowsWithoutRowID = true
            } else if !rowsNamed {
                continue   // the statements that could write this table changed no row
            }
            // Rows updated by something the authorizer did not describe: any column.
            if !table.updated.isEmpty && table.columns == [] { table.columns = nil }
            changes.tables[name] = table
        }
        pending = DatabaseChanges()
        unnamedRowTables = []
        if !changes.isEmpty { committing.append(changes) }
    }

    /// The rollback hook: nothing of the transaction, nor of a COMMIT that failed, happened.
    func transactionRolledBack() {
        pending = DatabaseChanges()
        unnamedRowTables = []
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

/// What the authorizer collects while one statement is prepared.
struct PreparedRegion {
    /// What the statement reads.
    var reads = DatabaseRegion()
    /// Per table (lower-cased): the columns it writes, or `nil` for whole rows (INSERT, DELETE,
    /// and tables it drops or alters).
    var writes: [String: Set<String>?] = [:]
    /// Whether it drops or alters a table: it changes what readers see without changing rows.
    var changesSchema = false
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
