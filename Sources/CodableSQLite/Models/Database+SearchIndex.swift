import Foundation

/// A searchable model's FTS5 index on SQLite: an FTS5 table keyed on the row's rowid, holding its
/// own copy of the searched text, kept in step by three triggers on the model's table.
///
/// Its own copy, not an external-content table over the model's table: FTS5 removes a row's
/// words by its text, and an external-content index only has the table's current text, which an
/// `INSERT OR REPLACE` (whose delete fires no trigger unless `recursive_triggers` is on, in any
/// process writing the file) replaces without telling it, leaving words behind for good. Here
/// every insert first removes whatever the index holds for its rowid, so no writer can leave it
/// wrong; the cost is the text stored twice.
///
/// The statements are derived from the ``SearchPlan`` alone, and SQLite keeps their text, so
/// comparing them with the schema's tells whether the index is current: when the declaration
/// changed (another property, another language), the index and its triggers are made again and
/// filled from the table's rows, which also indexes rows saved before the declaration.
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
            + "tokenize=\(SQLName.literal(tokenizer)), prefix='2 3 4')"
    }

    /// Fills the index from the table's rows.
    var fill: String {
        let names = columns.joined(separator: ", ")
        return "INSERT INTO \(quotedIndex) (rowid, \(names)) SELECT rowid, \(names) FROM \(quotedTable)"
    }

    /// The triggers' names and statements: an insert indexes the new row (after removing what the
    /// index held for its rowid), a delete removes the old row's, an update that changes the text
    /// or the rowid does both.
    var triggers: [(name: String, sql: String)] {
        let names = columns.joined(separator: ", ")
        let new = columns.map { "new." + $0 }.joined(separator: ", ")
        let insert = "DELETE FROM \(quotedIndex) WHERE rowid = new.rowid; INSERT INTO \(quotedIndex) (rowid, \(names)) VALUES (new.rowid, \(new));"
        let remove = "DELETE FROM \(quotedIndex) WHERE rowid = old.rowid;"
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
            // A searchable optional property that no saved value had yet has no column: the triggers read it.
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
            try connection.execute(fill)
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

/// The declaration each searchable table's index was last found current for by this database
/// object, outside any transaction (which could still roll the index back): searches of that
/// declaration skip the check. One entry per table, so another declaration checks again.
final class SearchIndexes: Sendable {
    private let current = Locked<[String: String]>([:])

    func isCurrent(_ plan: SearchPlan) -> Bool { current.withLock { $0[plan.table] == plan.signature } }
    func found(_ plan: SearchPlan) { current.withLock { $0[plan.table] = plan.signature } }
    func forget(table: String) { current.withLock { $0[table] = nil } }
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
                searchIndexes.forget(table: schema.table)
            }
            return
        }
        searchIndexes.forget(table: plan.table)
        try SearchIndex(plan: plan).prepare(on: connection, columns: try connection.columnsByName(in: schema.table))
    }

    /// Makes sure the index of a plan's existing table is current before a search reads it: checked
    /// on a reader, made on the writer only when it is not.
    func ensureSearchIndex(_ plan: SearchPlan) throws {
        if searchIndexes.isCurrent(plan) { return }
        let index = SearchIndex(plan: plan)
        if try !withReader({ try index.isCurrent(on: $0) }) {
            _ = try withWriter { connection in
                try index.prepare(on: connection, columns: try connection.columnsByName(in: plan.table))
            }
        }
        // Inside a transaction, a rollback could still take the index away.
        if !hasOpenTransactions { searchIndexes.found(plan) }
    }

    /// Empties a searchable model's full-text index and fills it again from its table's rows.
    ///
    /// ```swift
    /// try await db.rebuildSearchIndex(Note.self)
    /// ```
    ///
    /// The index keeps itself in step (triggers), so this is needed only after something went
    /// around them: rows written while the triggers were dropped, or a `VACUUM` of a table whose
    /// id is not an integer (SQLite may then renumber the rowids the index is keyed on).
    public func rebuildSearchIndex<T: Model & Sendable>(_ type: T.Type) async throws {
        try await performWrite { connection in
            guard try self.tableForReading(T.self) != nil else { return }
            let plan = try SearchPlan.of(T.self)
            try self.ensureSearchIndex(plan)
            let index = SearchIndex(plan: plan)
            try connection.inTransaction {
                try connection.execute("DELETE FROM \(index.quotedIndex)")
                try connection.execute(index.fill)
            }
        }
    }
}
