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

    /// Refuses a table written before a property became a relationship: its column holds the
    /// related value as JSON, which reading as a link would silently lose.
    private func checkRelationshipColumns(_ schema: ModelReflection, existing: [String: SQLite.Column], on connection: RawConnection) throws {
        guard !schema.relationships.isEmpty else { return }
        let table = SQLName.quoted(schema.table)
        let foreignKeys = Set(try connection.execute("PRAGMA foreign_key_list(\(table))").compactMap { $0["from"]?.stringValue })
        for relationship in schema.relationships {
            guard existing[relationship.name] != nil else { continue }
            if relationship.isToMany || !foreignKeys.contains(relationship.name) {
                let target = relationship.target
                throw ModelError(.schemaMismatch, schema.modelType, """
                    has the relationship `\(relationship.name)` (\(relationship.isToMany ? "[\(target)]" : "\(target)")), but column \
                    "\(relationship.name)" of table \(table) holds it as JSON, from a version that stored it inside the row. \
                    Reading it as a relationship would lose that data. Migrate it (SQLite.Migrator): save the values \
                    decoded from the JSON as \(target) values, then drop the column (\
                    ALTER TABLE \(table) DROP COLUMN "\(relationship.name)"); or rename the table with `static var tableName`.
                    """)
            }
        }
    }

    /// Adds the columns of new properties, and reports changes that cannot be made safely.
    private func evolve(
        _ schema: ModelReflection, columns: [ModelReflection.Property], existing: [String: SQLite.Column], on connection: RawConnection
    ) throws {
        let table = SQLName.quoted(schema.table)
        let model = schema.modelType
        guard let idColumn = existing[schema.id.name], idColumn.primaryKeyPosition > 0 else {
            throw ModelError(.schemaMismatch, model, """
                table \(table) exists but its primary key is not the column "\(schema.id.name)", so values cannot be \
                saved by id. Rename the table with a migration, or set `static var tableName` to another name.
                """)
        }
        var madeOptional: [ModelReflection.Property] = []
        var hasRows: Bool?
        func tableHasRows() throws -> Bool {
            if let hasRows { return hasRows }
            let rows = try connection.execute("SELECT EXISTS (SELECT 1 FROM \(table)) AS hasRows")
            let result = rows.first?["hasRows"]?.boolValue ?? false
            hasRows = result
            return result
        }
        for property in columns where property.name != schema.id.name {
            let name = SQLName.quoted(property.name)
            guard let column = existing[property.name] else {
                if !property.isOptional, try tableHasRows() {
                    throw ModelError(.schemaMismatch, model, """
                        has the new non-optional property `\(property.name)`, but table \(table) already has rows, which \
                        have no value for it. Make it optional (\(property.name): \(property.type)?), or add a migration \
                        that adds the column with a value for existing rows: ALTER TABLE \(table) ADD COLUMN \(name) \
                        \(property.storage.rawValue) NOT NULL DEFAULT <value>
                        """)
                }
                try connection.execute("ALTER TABLE \(table) ADD COLUMN \(ModelTable.columnDefinition(property))")
                continue
            }
            if !column.accepts(property.storage) {
                throw ModelError(.schemaMismatch, model, """
                    property `\(property.name)` is now \(property.type), stored as \(property.storage.rawValue), but column \
                    \(name) of table \(table) is declared \(column.type.isEmpty ? "without a type" : column.type); \
                    its existing values would not decode. Convert the column with a migration (SQLite.Migrator).
                    """)
            }
            if property.isOptional && column.isNotNull {
                // Made optional: the table is rebuilt without NOT NULL, as PostgreSQL drops it.
                madeOptional.append(property)
            }
            if !property.isOptional && !column.isNotNull {
                let nulls = try connection.execute("SELECT count(*) AS nulls FROM \(table) WHERE \(name) IS NULL")
                if let count = nulls.first?["nulls"]?.intValue, count > 0 {
                    throw ModelError(.schemaMismatch, model, """
                        property `\(property.name)` is no longer optional, but \(count) row(s) of table \(table) have no \
                        value for it. Give them one with a migration (UPDATE \(table) SET \(name) = … WHERE \(name) IS NULL), \
                        or keep the property optional.
                        """)
                }
            }
        }
        if !madeOptional.isEmpty { try relaxNotNull(madeOptional, of: schema, on: connection) }
        let stored = Set(columns.map(\.name))
        for column in existing.values where !stored.contains(column.name) && column.isNotNull && column.defaultValue == nil && column.primaryKeyPosition == 0 {
            throw ModelError(.schemaMismatch, model, """
                no longer stores `\(column.name)`, but column "\(column.name)" of table \(table) is NOT NULL without a \
                default, so new rows cannot be saved. Drop it (ALTER TABLE \(table) DROP COLUMN "\(column.name)") or give \
                it a default in a migration (SQLite.Migrator).
                """)
        }
    }
}
