import Foundation

/// A searchable model's FTS5 index on SQLite: an external-content table over the model's table
/// (the text is not stored twice), keyed on the row's rowid, kept in step by three triggers.
///
/// The statements are derived from the ``SearchPlan`` alone, and SQLite keeps their text, so
/// comparing them with the schema's tells whether the index is current: when the declaration
/// changed (another property, another language), the index and its triggers are made again and
/// rebuilt from the table's rows, which also indexes rows saved before the declaration.
struct SearchIndex {
    let plan: SearchPlan

    var quotedIndex: String { SQLName.quoted(plan.indexTable) }
    var quotedTable: String { SQLName.quoted(plan.table) }
    var columns: [String] { plan.fields.map { SQLName.quoted($0.name) } }

    /// `unicode61` folding case and removing diacritics (`remove_diacritics 2` also from letters
    /// with several), Porter stemming first for English; prefixes of 2 to 4 characters indexed
    /// for type-ahead.
    var createTable: String {
        let tokenizer = (plan.stemsOnSQLite ? "porter " : "") + "unicode61 remove_diacritics 2"
        return "CREATE VIRTUAL TABLE \(quotedIndex) USING fts5(\(columns.joined(separator: ", ")), "
            + "content=\(SQLName.literal(plan.table)), tokenize=\(SQLName.literal(tokenizer)), prefix='2 3 4')"
    }

    /// The triggers' names and statements: an insert indexes the new row, a delete removes the
    /// old row's words (FTS5 needs the old text to find them), an update that changes the text or
    /// the rowid does both.
    var triggers: [(name: String, sql: String)] {
        let names = columns.joined(separator: ", ")
        let new = columns.map { "new." + $0 }.joined(separator: ", ")
        let old = columns.map { "old." + $0 }.joined(separator: ", ")
        let insert = "INSERT INTO \(quotedIndex) (rowid, \(names)) VALUES (new.rowid, \(new));"
        let remove = "INSERT INTO \(quotedIndex) (\(quotedIndex), rowid, \(names)) VALUES ('delete', old.rowid, \(old));"
        let changed = (["rowid"] + columns).map { "old.\($0) IS NOT new.\($0)" }.joined(separator: " OR ")
        let name = { (event: String) in plan.indexTable + " " + event }
        return [
            (name("insert"), "CREATE TRIGGER \(SQLName.quoted(name("insert"))) AFTER INSERT ON \(quotedTable) BEGIN \(insert) END"),
            (name("delete"), "CREATE TRIGGER \(SQLName.quoted(name("delete"))) AFTER DELETE ON \(quotedTable) BEGIN \(remove) END"),
            (name("update"), "CREATE TRIGGER \(SQLName.quoted(name("update"))) AFTER UPDATE ON \(quotedTable) WHEN \(changed) BEGIN \(remove) \(insert) END"),
        ]
    }

    /// Whether the index and its triggers are those of the plan.
    func isCurrent(on connection: RawConnection) throws -> Bool {
        let expected = [(plan.indexTable, createTable)] + triggers
        let placeholders = Array(repeating: "?", count: expected.count).joined(separator: ", ")
        let found = try connection.withStatement("SELECT name, sql FROM sqlite_master WHERE name IN (\(placeholders))") { statement in
            try statement.bind(expected.map { SQLite.Value.text($0.0) })
            return try statement.rows()
        }
        let current = Dictionary(found.compactMap { row in row["name"]?.stringValue.map { ($0, row["sql"]?.stringValue ?? "") } }) { first, _ in first }
        return expected.allSatisfy { current[$0.0] == $0.1 }
    }

    /// Creates the index, or makes it again when its declaration changed.
    func prepare(on connection: RawConnection, columns existing: [String: SQLite.Column]) throws {
        if try isCurrent(on: connection) { return }
        try connection.inTransaction {
            // A searchable optional property that no saved value had yet has no column: the index reads it.
            for field in plan.fields where existing[field.name] == nil {
                try connection.execute("ALTER TABLE \(quotedTable) ADD COLUMN \(SQLName.quoted(field.name)) TEXT")
            }
            try remove(on: connection)
            do {
                try connection.execute(createTable)
            } catch let error as SQLite.Error where error.message.contains("no such module: fts5") {
                throw ModelError(.unsupportedModel, modelNamed: plan.model, """
                    cannot be searched: this SQLite library was built without FTS5, its full-text index \
                    (Apple's, Android's and the common Linux distributions' have it). (\(error.message))
                    """)
            }
            for (_, sql) in triggers { try connection.execute(sql) }
            try connection.execute("INSERT INTO \(quotedIndex) (\(quotedIndex)) VALUES ('rebuild')")
        }
    }
}

extension SearchIndex {
    /// Drops the index and its triggers.
    func remove(on connection: RawConnection) throws {
        for (name, _) in triggers { try connection.execute("DROP TRIGGER IF EXISTS \(SQLName.quoted(name))") }
        try connection.execute("DROP TABLE IF EXISTS \(quotedIndex)")
    }
}

/// The search indexes (table and declaration) this database object has found current since it
/// opened, outside any transaction (which could still roll the index back).
final class SearchIndexes: Sendable {
    let checked = Locked<Set<String>>([])
}

extension SQLite.Database {
    var searchIndexes: SearchIndexes { attachment(SearchIndexes.self) { _ in SearchIndexes() } }

    /// Prepares the index of a searchable model's table, inside the transaction preparing the
    /// table (so that its triggers are there before any row is saved).
    /// A model that is no longer searchable loses the index the library made for it (its triggers
    /// name it), so that its writes stop paying for it.
    func prepareSearchIndex(for schema: ModelReflection, on connection: RawConnection) throws {
        guard let plan = try SearchPlan.ifSearchable(schema.modelType) else {
            let index = SearchIndex(plan: SearchPlan(model: "\(schema.modelType)", table: schema.table, fields: [], language: .simple))
            let found = try connection.withStatement("SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND name = ?") { statement in
                try statement.bind([.text(index.triggers[0].name)])
                return try statement.step() ? statement.int64(at: 0) : 0
            }
            if found > 0 {
                try index.remove(on: connection)
                searchIndexes.checked.withLock { $0 = $0.filter { !$0.hasPrefix(schema.table + "_search\n") } }
            }
            return
        }
        try SearchIndex(plan: plan).prepare(on: connection, columns: try connection.columnsByName(in: schema.table))
    }

    /// Makes sure the index of `T`'s existing table is current before a search reads it: checked
    /// on a reader, made on the writer only when it is not.
    func ensureSearchIndex<T: SearchableModel>(_ type: T.Type) throws -> SearchPlan {
        let plan = try SearchPlan.of(T.self)
        let key = plan.indexTable + "\n" + plan.signature
        if searchIndexes.checked.withLock({ $0.contains(key) }) { return plan }
        let index = SearchIndex(plan: plan)
        if try !withReader({ try index.isCurrent(on: $0) }) {
            _ = try withWriter { connection in
                try index.prepare(on: connection, columns: try connection.columnsByName(in: plan.table))
            }
        }
        // Inside a transaction, a rollback could still take the index away.
        if !hasOpenTransactions { searchIndexes.checked.withLock { _ = $0.insert(key) } }
        return plan
    }

    /// Rebuilds a searchable model's full-text index from its table's rows.
    ///
    /// ```swift
    /// try await db.rebuildSearchIndex(Note.self)
    /// ```
    ///
    /// The index keeps itself in step (triggers), so this is needed only after something went
    /// around them: rows written while the triggers were dropped, or a `VACUUM` of a table whose
    /// id is not an integer (SQLite may then renumber the rowids the index is keyed on).
    public func rebuildSearchIndex<T: SearchableModel & Sendable>(_ type: T.Type) async throws {
        try await performWrite { connection in
            guard try self.tableForReading(T.self) != nil else { return }
            let plan = try self.ensureSearchIndex(T.self)
            try connection.execute("INSERT INTO \(SQLName.quoted(plan.indexTable)) (\(SQLName.quoted(plan.indexTable))) VALUES ('rebuild')")
        }
    }
}
