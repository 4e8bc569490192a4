/// Tables and columns of the main database: what a statement reads, or what a transaction wrote.
///
/// Names are compared case-insensitively, as SQLite does.
struct DatabaseRegion: Sendable, Equatable {
    /// Per table (lower-cased name), the columns (lower-cased), or `nil` for every column.
    private(set) var tables: [String: Set<String>?] = [:]
    /// Per table, the only rows that matter (by rowid), for regions that read a few known rows.
    private(set) var rowIDs: [String: Set<Int64>] = [:]
    /// Per table limited by its rowid itself (a `WHERE` that pins it): the names an UPDATE of the
    /// rowid writes, lower-cased. A new row matters only when it has one of the rowids.
    private(set) var rowIDColumns: [String: Set<String>] = [:]

    var isEmpty: Bool { tables.isEmpty }

    /// Adds a column of a table; `column == nil` (or an empty name) means the whole row.
    mutating func insert(table: String, column: String?) {
        let table = table.lowercased()
        guard let column, !column.isEmpty else {
            tables[table] = .some(nil)
            return
        }
        switch tables[table] {
        case .none: tables[table] = [column.lowercased()]
        case .some(.none): break
        case .some(.some(var columns)):
            columns.insert(column.lowercased())
            tables[table] = columns
        }
    }

    /// Limits the region to some rows of a table (it must already read that table).
    mutating func limit(table: String, toRowIDs ids: Set<Int64>) {
        rowIDs[table.lowercased()] = ids
    }

    /// Limits the region to the rows of `table` whose rowid (named `column` in the query) is
    /// one of `ids`: no other row, inserted or not, can be read.
    mutating func limit(table: String, toRowIDs ids: Set<Int64>, column: String) {
        rowIDs[table.lowercased()] = ids
        rowIDColumns[table.lowercased()] = [column.lowercased(), "rowid", "oid", "_rowid_"]
    }

    mutating func formUnion(_ other: DatabaseRegion) {
        for (table, columns) in other.tables {
            guard let columns else {
                tables[table] = .some(nil)
                continue
            }
            for column in columns { insert(table: table, column: column) }
        }
    }

    /// The columns read of `table`: `nil` when it is not read at all, `.some(nil)` for every column.
    func columns(of table: String) -> Set<String>?? {
        tables[table]
    }

    /// The rows of `table` that matter, or `nil` for all of them.
    func rowIDs(of table: String) -> Set<Int64>? {
        rowIDs[table]
    }

    var tableNames: Set<String> { Set(tables.keys) }
}

/// What one committed transaction of the writer changed.
struct DatabaseChanges: Sendable {
    /// What one table saw.
    struct Table: Sendable {
        var inserted: Set<Int64> = []
        var updated: Set<Int64> = []
        var deleted: Set<Int64> = []
        /// The columns statements wrote: `nil` when a statement inserted or deleted rows (every
        /// column changes), else the columns set by UPDATE statements.
        var columns: Set<String>? = []
        /// Whether rows changed that have no rowid to name (`WITHOUT ROWID` tables).
        var hasRowsWithoutRowID = false
        /// The keys of changed rows, reported by temporary triggers (model tables whose changes
        /// someone follows with `changes(to:)`).
        var insertedKeys: [SQLite.Value] = []
        var updatedKeys: [SQLite.Value] = []
        /// The keys updated rows had before (with ``updatedKeys``, the keys after).
        var updatedOldKeys: [SQLite.Value] = []
        var deletedKeys: [SQLite.Value] = []

        var isEmpty: Bool {
            inserted.isEmpty && updated.isEmpty && deleted.isEmpty && columns == [] && !hasRowsWithoutRowID
        }
    }

    /// Per table, lower-cased.
    var tables: [String: Table] = [:]

    var isEmpty: Bool { tables.isEmpty }

    /// Whether these changes can change what `region` reads.
    func touches(_ region: DatabaseRegion) -> Bool {
        for (name, table) in tables {
            guard let read = region.columns(of: name) else { continue }
            let columnsOverlap: Bool
            if let written = table.columns, let read {
                columnsOverlap = !read.isDisjoint(with: written)
            } else {
                columnsOverlap = true
            }
            if let rows = region.rowIDs[name], let rowIDColumns = region.rowIDColumns[name], !table.hasRowsWithoutRowID {
                // A region on rows pinned by rowid: a row can only enter or leave it by its rowid.
                if !rows.isDisjoint(with: table.inserted) || !rows.isDisjoint(with: table.deleted) { return true }
                if !rows.isDisjoint(with: table.updated) && columnsOverlap { return true }
                // An UPDATE that sets the rowid reports the new one only: the old may be ours.
                let mayMoveRows = table.columns.map { !$0.isDisjoint(with: rowIDColumns) } ?? true
                if !table.updated.isEmpty && mayMoveRows { return true }
                continue
            }
            if let rows = region.rowIDs(of: name), !table.hasRowsWithoutRowID {
                // A region on known rows: those rows matter, and any new row (it may be the one
                // the query looks for).
                if !table.inserted.isEmpty || !rows.isDisjoint(with: table.deleted) { return true }
                if !rows.isDisjoint(with: table.updated) && columnsOverlap { return true }
                continue
            }
            if !table.inserted.isEmpty || !table.deleted.isEmpty || table.hasRowsWithoutRowID || columnsOverlap { return true }
        }
        return false
    }
}
