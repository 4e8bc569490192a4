import CSQLite

extension RawConnection {
    /// Whether SQLite finds the rows of `table WHERE column = 1` with a single cursor on a table of
    /// the main database positioned by rowid (`SeekRowid` or `NotExists` in the `EXPLAIN` program,
    /// no scan, no index): whether `column` is the table's rowid. Observation uses it to prove
    /// that a query reads only the rows its `WHERE` names.
    func findsRowsByRowID(column: String, of table: String) -> Bool {
        var opcodes: [String] = []
        var openReads = 0
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, "EXPLAIN SELECT 1 FROM \(table) WHERE \(column) = 1", -1, &statement, nil) == SQLITE_OK,
              let statement else { return false }
        defer { sqlite3_finalize(statement) }
        while sqlite3_step(statement) == SQLITE_ROW {
            guard let text = sqlite3_column_text(statement, 1) else { return false }
            let opcode = String(cString: text)
            if opcode == "OpenRead" {
                openReads += 1
                guard sqlite3_column_int(statement, 4) == 0 else { return false }   // p3: the main database
            }
            opcodes.append(opcode)
        }
        let scans: Set<String> = ["Rewind", "Last", "Next", "Prev", "SeekGE", "SeekGT", "SeekLE", "SeekLT", "IdxGT", "IdxGE",
                                  "IdxLT", "IdxLE", "DeferredSeek", "IdxRowid", "SorterSort", "Sort", "OpenEphemeral", "VFilter"]
        return openReads == 1 && opcodes.contains { $0 == "SeekRowid" || $0 == "NotExists" } && !opcodes.contains(where: scans.contains)
    }

    /// Whether the temp schema has an object (a table, view, trigger) of this name, which would
    /// shadow or act on the main database's table of that name; `true` when that cannot be read.
    func hasTemporaryObject(named name: String) -> Bool {
        var statement: OpaquePointer?
        let sql = "SELECT 1 FROM temp.sqlite_schema WHERE lower(name) = lower(?)"
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK, let statement else { return true }
        defer { sqlite3_finalize(statement) }
        sqlite3_bind_text(statement, 1, name, -1, csqlite_transient())
        return sqlite3_step(statement) != SQLITE_DONE
    }
}
