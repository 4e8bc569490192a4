import Foundation

extension SQLite.Database {
    /// The model's table for reading, or `nil` when it does not exist yet.
    func tableForReading<T: Model>(_ type: T.Type) throws -> ModelTable? {
        let inTransaction = hasOpenTransactions
        if let table = models.table(for: T.self, includingUncommitted: inTransaction) { return table }
        let schema = try ModelReflection.of(T.self)
        let (existing, linkTables) = try withReader { connection in
            let existing = try connection.columnsByName(in: schema.table)
            if !existing.isEmpty { try checkRelationshipColumns(schema, existing: existing, on: connection) }
            return (existing, try existingLinkTables(schema, on: connection))
        }
        guard !existing.isEmpty else { return nil }
        let table = ModelTable(
            schema: schema, columns: schema.properties.filter { existing[$0.name] != nil }, isWritable: false, linkTables: linkTables)
        models.set(table, committed: !inTransaction)
        return table
    }

    /// Creates `T`'s table now, or brings it up to date, as the first save would (for the sync
    /// engine, which installs its triggers on the table before anything is saved).
    package func prepareTable<T: Model>(for type: T.Type) throws {
        _ = try tableForWriting(T.self, sample: nil)
    }

    /// The model's table, created or brought up to date for saving values like `sample`.
    ///
    /// Without a sample (a relationship's target before any of its values is saved), every
    /// property gets a column. The tables of related types are prepared first.
    func tableForWriting<T: Model>(_ type: T.Type, sample: T?) throws -> ModelTable {
        if let table = models.table(for: T.self, includingUncommitted: hasOpenTransactions), table.isWritable { return table }
        let schema = try ModelReflection.of(T.self)
        for relationship in schema.relationships {
            func prepare<Target: Model>(_ target: Target.Type) throws { _ = try tableForWriting(Target.self, sample: nil) }
            try prepare(relationship.target)
        }
        guard let sample else {
            // Not recorded as writable: the first save of a value prepares it again with that value
            // as the sample, which checks its coding keys.
            return try prepareTable(
                schema, columns: schema.properties, indexes: try ModelTable.createIndexes(for: T.self, schema: schema), isWritable: false)
        }
        let columns = try schema.storedColumns(of: sample)
        return try prepareTable(schema, columns: columns, indexes: try ModelTable.createIndexes(for: T.self, schema: schema), isWritable: true)
    }

    /// Creates or evolves the table, and the link tables of its to-many relationships.
    private func prepareTable(
        _ schema: ModelReflection, columns: [ModelReflection.Property], indexes: [String], isWritable: Bool
    ) throws -> ModelTable {
        try withWriter { connection in
            if let table = models.table(for: schema.modelType, includingUncommitted: true), table.isWritable { return table }
            try connection.inTransaction {
                let existing = try connection.columnsByName(in: schema.table)
                if existing.isEmpty {
                    try connection.execute(ModelTable.createTable(schema, columns: columns))
                    try models.tableCreated(schema, on: connection)
                } else {
                    try checkRelationshipColumns(schema, existing: existing, on: connection)
                    try evolve(schema, columns: columns, existing: existing, on: connection)
                }
                for index in indexes { try connection.execute(index) }
                for relationship in schema.relationships where relationship.isToMany {
                    for sql in ModelTable.createLinkTable(relationship, owner: schema) {
                        try connection.execute(sql)
                    }
                }
                try prepareSearchIndex(for: schema, on: connection)
            }
            let table = ModelTable(
                schema: schema, columns: columns, isWritable: isWritable,
                linkTables: Set(schema.relationships.filter(\.isToMany).map(\.linkTable)))
            models.set(table, committed: connection.isAutocommit)
            return table
        }
    }

    /// The link tables of the schema's to-many relationships that exist.
    private func existingLinkTables(_ schema: ModelReflection, on connection: RawConnection) throws -> Set<String> {
        var found = Set<String>()
        for relationship in schema.relationships where relationship.isToMany {
            if try !connection.columnsByName(in: relationship.linkTable).isEmpty { found.insert(relationship.linkTable) }
        }
        return found
    }

    /// Refuses a table whose column holds a relationship as JSON (``SchemaChange``'s rule), from
    /// the catalog: the table's columns and its foreign keys.
    private func checkRelationshipColumns(_ schema: ModelReflection, existing: [String: SQLite.Column], on connection: RawConnection) throws {
        guard !schema.relationships.isEmpty else { return }
        let foreignKeys = try connection.execute("PRAGMA foreign_key_list(\(SQLName.quoted(schema.table)))").compactMap { $0["from"]?.stringValue }
        try SchemaChange.checkRelationshipColumns(of: schema, columns: Set(existing.keys), foreignKeys: Set(foreignKeys))
    }

    /// Brings the table in line with the model, as `SchemaChange` decides (the rules both engines
    /// share): the catalog described, the rows asked about only when a rule needs them.
    private func evolve(
        _ schema: ModelReflection, columns: [ModelReflection.Property], existing: [String: SQLite.Column], on connection: RawConnection
    ) throws {
        let table = SQLName.quoted(schema.table)
        let properties = Dictionary(columns.map { ($0.name, $0) }) { first, _ in first }
        let keyColumns = existing.values.filter { $0.primaryKeyPosition > 0 }.count
        let described = existing.mapValues { column in
            SchemaChange.Column(
                name: column.name, type: column.type, accepts: properties[column.name].map { column.accepts($0.storage) } ?? true,
                isNotNull: column.isNotNull, hasDefault: column.defaultValue != nil, isPrimaryKey: column.primaryKeyPosition > 0 && keyColumns == 1)
        }
        let questions = SchemaChange.questions(for: schema, columns: columns, existing: described)
        var answers = SchemaChange.Answers()
        if questions.hasRows {
            answers.hasRows = try connection.execute("SELECT EXISTS (SELECT 1 FROM \(table)) AS hasRows").first?["hasRows"]?.boolValue ?? false
        }
        for name in questions.nullsIn {
            let column = SQLName.quoted(name)
            answers.nulls[name] = try connection.execute("SELECT count(*) AS nulls FROM \(table) WHERE \(column) IS NULL").first?["nulls"]?.intValue ?? 0
        }
        let steps = try SchemaChange.steps(for: schema, columns: columns, existing: described, answers: answers) { $0.storage.rawValue }
        for step in steps {
            switch step {
            case .addColumn(let property):
                try connection.execute("ALTER TABLE \(table) ADD COLUMN \(ModelTable.columnDefinition(property))")
            case .dropNotNull(let properties):
                // As PostgreSQL drops it: the table's definition edited in place (see `relaxNotNull`).
                try relaxNotNull(properties, of: schema, on: connection)
            }
        }
    }
}
